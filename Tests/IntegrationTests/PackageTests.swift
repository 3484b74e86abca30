import XCTest

/// The Debian package as a user gets it: unpacked into a scratch root, the binary runs and says
/// its version and commit, a manual page renders, and the bash completion completes a command
/// and a capture's file name.
/// Runs on the package BLESNIFF_DEB names (scripts/release/test_package.sh builds one and sets it; CI
/// runs that script); skipped when it is unset or dpkg-deb is missing.
final class PackageTests: XCTestCase {
    private func sh(_ script: String, _ environment: [String: String] = [:]) throws -> (status: Int32, out: String) {
        let p = try Subprocess.run("/bin/bash", ["-c", script], environment: environment)
        return (p.status, p.out + p.err)
    }

    func testDebianPackageInstallsAWorkingTool() throws {
        guard let deb = ProcessInfo.processInfo.environment["BLESNIFF_DEB"], !deb.isEmpty else {
            throw XCTSkip("BLESNIFF_DEB is unset (scripts/release/test_package.sh builds a package and runs this)")
        }
        guard try sh("command -v dpkg-deb").status == 0 else { throw XCTSkip("dpkg-deb is missing") }
        let root = NSTemporaryDirectory() + "blesniff-deb-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        let env = ["DEB": deb, "ROOT": root]

        let unpack = try sh("dpkg-deb -x \"$DEB\" \"$ROOT\" && dpkg-deb -f \"$DEB\" Depends", env)
        XCTAssertEqual(unpack.status, 0, unpack.out)
        for lib in ["libc6", "libpcap0.8", "libyaml-0-2", "zlib1g"] {
            XCTAssertTrue(unpack.out.contains(lib), "Depends lacks " + lib + ": " + unpack.out)
        }

        let version = try sh("\"$ROOT/usr/bin/blesniff\" --version", env)
        XCTAssertEqual(version.status, 0, version.out)
        XCTAssertNotNil(version.out.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{7,}(-modified)?\)\n$"#,
                                           options: .regularExpression), version.out)
        let missing = try sh("ldd \"$ROOT/usr/bin/blesniff\" | grep 'not found' || true", env)
        XCTAssertEqual(missing.out, "", "libraries not found")
        let decode = try sh("\"$ROOT/usr/bin/blesniff\" read --quiet " + Fixtures.captures + "/gatt_session.btsnoop", env)
        XCTAssertEqual(decode.status, 0, decode.out)

        let pages = Fixtures.files(in: root + "/usr/share/man/man1")
        for page in ["blesniff.1.gz", "blesniff.read.1.gz", "blesniff.audit.1.gz", "blesniff.capture.1.gz"] {
            XCTAssertTrue(pages.contains(page), "no manual page " + page + " in " + pages.joined(separator: " "))
        }
        guard try sh("command -v man && command -v col").status == 0 else { throw XCTSkip("man or col is missing") }
        let man = try sh("MANWIDTH=100 man -l \"$ROOT/usr/share/man/man1/blesniff.audit.1.gz\" 2>&1 | col -b", env)
        XCTAssertEqual(man.status, 0, man.out)
        XCTAssertTrue(man.out.contains("blesniff audit"), man.out)
        XCTAssertTrue(man.out.contains("--fail-on"), man.out)

        // What bash does on `blesniff au<TAB>`, and on `blesniff audit --fo<TAB>`.
        let completion = try sh("""
            source "$ROOT/usr/share/bash-completion/completions/blesniff"
            COMPREPLY=(); COMP_WORDS=(blesniff au); COMP_CWORD=1; COMP_LINE="blesniff au"; COMP_POINT=${#COMP_LINE}
            PATH="$ROOT/usr/bin:$PATH" _blesniff blesniff au blesniff; echo "${COMPREPLY[*]}"
            COMPREPLY=(); COMP_WORDS=(blesniff audit --fo); COMP_CWORD=2; COMP_LINE="blesniff audit --fo"; COMP_POINT=${#COMP_LINE}
            PATH="$ROOT/usr/bin:$PATH" _blesniff blesniff --fo audit; echo "${COMPREPLY[*]}"
            cd "$(mktemp -d)" && touch yesterday.btsnoop
            COMPREPLY=(); COMP_WORDS=(blesniff read ye); COMP_CWORD=2; COMP_LINE="blesniff read ye"; COMP_POINT=${#COMP_LINE}
            PATH="$ROOT/usr/bin:$PATH" _blesniff blesniff ye read; echo "${COMPREPLY[*]}"
            """, env)
        XCTAssertEqual(completion.status, 0, completion.out)
        let lines = completion.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "audit", completion.out)
        XCTAssertEqual(lines.dropFirst().first, "--format", completion.out)
        XCTAssertEqual(lines.dropFirst(2).first, "yesterday.btsnoop", completion.out)
        for file in ["usr/share/zsh/vendor-completions/_blesniff", "usr/share/fish/vendor_completions.d/blesniff.fish",
                     "usr/share/doc/blesniff/copyright", "usr/share/doc/blesniff/NOTICE"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/" + file), file)
        }
    }
}
