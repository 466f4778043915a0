#!/usr/bin/env bash
# Type-checks StreamCacheAVFoundation (Apple-only code) on Linux against the shapes of the
# AVFoundation classes it uses (avfoundation-shapes.swift). It catches Swift errors (isolation,
# sendability, names) before a push reaches apple.yml, which builds against the real SDK.
# Run after `swift build` (it uses the debug build's modules).
set -euo pipefail
cd "$(dirname "$0")/.."
build=.build/$(uname -m)-unknown-linux-gnu/debug
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swiftc -emit-module -module-name AVFoundation -parse-as-library .ci/avfoundation-shapes.swift \
    -emit-module-path "$work/AVFoundation.swiftmodule"
maps=()
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$map"); done < <(
    find "$build" -maxdepth 3 -name module.modulemap | grep -v -E 'ArgumentParser|-tool'
    find .build/checkouts -name module.modulemap -path '*GRDBSQLite*'
)
includes=()
while IFS= read -r folder; do includes+=(-Xcc "-I$folder"); done < <(
    find .build/checkouts -type d -name include -path '*Sources*'
)
swiftc -typecheck -swift-version 6 -module-name StreamCacheAVFoundation -I "$work" -I "$build/Modules" \
    "${maps[@]}" "${includes[@]}" Sources/StreamCacheAVFoundation/*.swift
echo "StreamCacheAVFoundation type-checks against the AVFoundation shapes"
