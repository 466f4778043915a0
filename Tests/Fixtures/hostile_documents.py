#!/usr/bin/env python3
"""Hostile manifests for the corpus tests and benchmarks: within every bound StreamCache sets,
costly to read.

Usage: hostile_documents.py SHAPE MIB FILE
  entities    an MPD of `&amp;` entities (each one a piece the XML parser reports), one element
              of them up to 8 MiB (the XML parser refuses one text of 10 MB)
  attributes  an MPD of elements of 900 attributes each, under the bound of 1,000 per element
  representations
              an MPD of one adaptation set of ever more representations (a template each of
              many segments), under the per-document segment budget
  segments    an HLS media playlist of one-character segments (`#EXTINF:1,` and `a`), as many
              as the size holds
  tags        an HLS media playlist whose segments each carry a long `EXT-X-DATERANGE` of many
              attributes
"""
import sys

HEAD = ('<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'mediaPresentationDuration="PT10S"><ProgramInformation>')
TAIL = ('</ProgramInformation><Period><AdaptationSet mimeType="video/mp4"><Representation id="v" '
        'bandwidth="1000"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>')
MIB = 1024 * 1024

shape, size, path = sys.argv[1], int(float(sys.argv[2]) * MIB), sys.argv[3]
# What the repeated part may take: the whole is at most SIZE, the bound a document may reach.
size -= len(HEAD) + len(TAIL) + 64
with open(path, "w") as out:
    if shape == "entities":
        # As few texts as the bound allows: a reader quadratic in one text's pieces shows at once.
        texts = -(-size // (8 * MIB))
        title = "<Title>" + "&amp;" * (size // texts // 5 - 4) + "</Title>"
        out.write(HEAD + title * texts + TAIL)
    elif shape == "attributes":
        element = "<Label " + " ".join(f'a{i}="1"' for i in range(900)) + "/>"
        out.write(HEAD + "<Title>x</Title>" + element * (size // len(element)) + TAIL)
    elif shape == "representations":
        template = ('<SegmentTemplate media="$RepresentationID$-$Number$.m4s" '
                    'initialization="$RepresentationID$-init.mp4" duration="1"/>')
        representation = '<Representation id="r{}" bandwidth="1000" width="320" height="240"/>'
        count = size // len(representation.format(100000))
        sets = ('<Period><AdaptationSet contentType="video" mimeType="video/mp4">' + template
                + "".join(representation.format(i) for i in range(count)) + '</AdaptationSet></Period>')
        out.write(HEAD + "<Title>x</Title>" + TAIL.replace('<Period><AdaptationSet mimeType="video/mp4"><Representation id="v" '
                  'bandwidth="1000"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet></Period>', sets))
    elif shape == "segments":
        out.write("#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + "#EXTINF:1,\na\n" * (size // 13) + "#EXT-X-ENDLIST\n")
    else:
        attributes = ",".join(f'X-A{i}="v"' for i in range(100))
        segment = f'#EXT-X-DATERANGE:ID="d",START-DATE="2026-01-01T00:00:00Z",{attributes}\n#EXTINF:1,\na\n'
        out.write("#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + segment * (size // len(segment)) + "#EXT-X-ENDLIST\n")
