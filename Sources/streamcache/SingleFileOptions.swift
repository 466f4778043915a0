import ArgumentParser

/// `--force`, `--verbose` and `--exact` of a command that writes a package as one file
/// (`download -o`, `export ID FILE`).
struct SingleFileOptions: ParsableArguments {
    @Flag(name: .long, help: "Replace a file that is there (one file from a package).")
    var force = false

    @Flag(name: .long, help: "Show the ffmpeg command that writes one file from a package.")
    var verbose = false

    @Flag(
        name: .long,
        help:
            "With --section: cut at its exact frames, the video's edges re-encoded (H.264); without it, from the keyframe at or before START."
    )
    var exact = false
}
