#!/usr/bin/env bash
# Live recording beside ffmpeg: each segment requested how often, and how soon after it appears
# in the origin's playlist (2 s segments, a window of 4). Usage: bench/live.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
python3 bench/live.py "$bin" "${1:-30}"
