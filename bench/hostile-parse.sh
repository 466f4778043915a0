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

for mib in 1 4 8; do
    for shape in entities attributes; do python3 bench/hostile_mpd.py "$shape" "$mib" "$work/$shape-$mib.mpd"; done
done
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
