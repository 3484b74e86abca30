// swift-tools-version:6.0
import PackageDescription

// Release builds skip the run-time exclusivity checks on class properties: the decoders mutate
// per-connection state on every frame, and the checks cost about 10% of decoding. Debug builds, the
// test suite and its sanitizer runs keep them. (Unsafe flags: the package cannot be a versioned
// dependency of another package: blesniff is a tool, and its modules are not offered as libraries.)
let release: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "blesniff",
    products: [
        .executable(name: "blesniff", targets: ["blesniff"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "blesniff",
            dependencies: [
                "Report", "Decoders", "Capture", "Wire", "CBuildInfo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ], swiftSettings: release),
        // The commit a release is built from (scripts/release/build.sh defines it; empty otherwise).
        .systemLibrary(name: "CBuildInfo"),
        // What every layer shares: bytes and their reader, addresses, link types, the captured
        // record and the packet taken out of it. Standard library only.
        .target(name: "Wire", swiftSettings: release),
        // Pure decoding: bytes in, typed values out. No I/O, standard library only.
        .target(name: "Decoders", dependencies: ["Wire"], exclude: ["generated/AssignedNumbers.LICENSE"], swiftSettings: release),
        .target(name: "Report", dependencies: ["Decoders", "Wire", "CYaml"], swiftSettings: release),
        // libyaml for `.blesniff.yml`: its parser's events become a small node tree in Report.
        .systemLibrary(
            name: "CYaml",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(
            name: "CPcap",
            pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"])]),
        // Linux Bluetooth socket constants for live capture (headers only).
        .systemLibrary(
            name: "CBluetooth",
            providers: [.apt(["libbluetooth-dev"])]),
        // inflate for Android bug reports (zip entries, btsnooz sections).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .target(name: "Capture", dependencies: ["Wire", "CPcap", "CBluetooth", "CZlib"], swiftSettings: release),
        .testTarget(name: "DecodersTests", dependencies: ["Decoders", "Wire"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "Decoders", "Wire"]),
        .testTarget(name: "ReportTests", dependencies: ["Report", "Decoders", "Capture", "Wire"]),
        // Whole-pipeline tests over real captures, compared with tshark's decode of the same files.
        .testTarget(name: "IntegrationTests", dependencies: ["Report", "Decoders", "Capture", "Wire"]),
    ]
)
