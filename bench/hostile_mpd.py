#!/usr/bin/env python3
"""Hostile MPDs for the benchmarks: within every bound StreamCache sets, costly to read.

Usage: hostile_mpd.py SHAPE MIB FILE
  entities    text of `&amp;` entities (each one a piece the XML parser reports); past about
              10 MB the XML parser refuses the document once it has read that much
  attributes  elements of 900 attributes each, under the bound of 1,000 per element
"""
import sys

HEAD = ('<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'mediaPresentationDuration="PT10S"><ProgramInformation><Title>')
TAIL = ('</Title></ProgramInformation><Period><AdaptationSet mimeType="video/mp4"><Representation id="v" '
        'bandwidth="1000"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>')

shape, size, path = sys.argv[1], float(sys.argv[2]) * 1024 * 1024, sys.argv[3]
with open(path, "w") as out:
    if shape == "entities":
        out.write(HEAD + "&amp;" * (int(size) // 5 - 100) + TAIL)
    else:
        element = "<Label " + " ".join(f'a{i}="1"' for i in range(900)) + "/>"
        out.write(HEAD + "x" + TAIL.replace("<Period>", element * (int(size) // len(element)) + "<Period>"))
