import CBuildInfo

/// What `blesniff --version` prints: the release number and the commit the binary was built from.
enum BlesniffVersion {
    static let number = "0.1.0"

    /// The git commit, when the build was told it (scripts/release/build.sh); else empty.
    static var commit: String { String(cString: blesniff_build_commit()) }

    static var text: String { number + " (commit " + (commit.isEmpty ? "unknown" : commit) + ")" }
}
