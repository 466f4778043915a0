#!/usr/bin/env bash
# How the time and peak memory of reading a hostile MPD grow with its size: text of `&amp;`
# entities (each one a piece the XML parser reports) and many attributes, at 1, 4 and 8 MiB
# (documents are refused past 16 MiB, and libxml2 refuses one text of 10 MB). `hls inspect FILE` parses the document once; a linear
# reader shows seconds per MiB that stay flat as the size grows.
#
#   bench/hostile-parse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
head = ('<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'mediaPresentationDuration="PT10S"><ProgramInformation><Title>')
tail = ('</Title></ProgramInformation><Period><AdaptationSet mimeType="video/mp4"><Representation id="v" '
        'bandwidth="1000"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>')
for mib in (1, 4, 8):
    with open(f"{work}/entities-{mib}.mpd", "w") as out:
        out.write(head + "&amp;" * (mib * 1024 * 1024 // 5) + tail)
    # Elements of 900 attributes each, under the bound of 1,000 per element.
    element = "<Label " + " ".join(f'a{i}="1"' for i in range(900)) + "/>"
    with open(f"{work}/attributes-{mib}.mpd", "w") as out:
        out.write(head + "x" + tail.replace("<Period>", element * (mib * 1024 * 1024 // len(element)) + "<Period>"))
PY
printf '%-12s %6s %9s %11s %9s\n' shape MiB seconds 's per MiB' 'peak MiB'
for shape in entities attributes; do
    for mib in 1 4 8; do
        file="$work/$shape-$mib.mpd"
        /usr/bin/time -f '%e %M' -o "$work/time" "$bin" hls inspect "$file" >/dev/null
        read -r seconds kib < "$work/time"
        awk -v s="$shape" -v m="$mib" -v t="$seconds" -v k="$kib" \
            'BEGIN { printf "%-12s %6d %9.2f %11.3f %9.0f\n", s, m, t, t / m, k / 1024 }'
    done
done
