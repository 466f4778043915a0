#!/usr/bin/env bash
# How the time and peak memory of reading a hostile manifest grow with its size: MPDs of
# `&amp;` entities (each one a piece the XML parser reports), of many attributes and of many
# representations in one adaptation set, HLS playlists
# of one-character segments and of long tags, at 1, 4 and 16 MiB (`Tests/Fixtures/hostile_documents.py`;
# documents past 16 MiB are refused). `hls inspect FILE` parses the document once; a linear
# reader shows seconds per MiB that stay flat as the size grows, or a refusal within budget.
#
#   bench/hostile-parse.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

shapes="entities attributes representations segments tags"
for mib in 1 4 16; do
    for shape in $shapes; do python3 Tests/Fixtures/hostile_documents.py "$shape" "$mib" "$work/$shape-$mib"; done
done
printf '%-12s %6s %9s %11s %9s  %s\n' shape MiB seconds 's per MiB' 'peak MiB' outcome
for shape in $shapes; do
    for mib in 1 4 16; do
        file="$work/$shape-$mib"
        if /usr/bin/time -f '%e %M' -o "$work/time" "$bin" packages inspect "$file" >/dev/null 2>"$work/err"; then
            outcome=read
        else
            outcome="refused: $(head -c 70 "$work/err")"
        fi
        read -r seconds kib < <(tail -1 "$work/time")
        awk -v s="$shape" -v m="$mib" -v t="$seconds" -v k="$kib" -v o="$outcome" \
            'BEGIN { printf "%-12s %6d %9.2f %11.3f %9.0f  %s\n", s, m, t, t / m, k / 1024, o }'
    done
done
