// swift-tools-version:6.0
//
// stepsign: a step-up signing daemon for Linux only (epoll, SO_PEERCRED, prctl, glibc 2.34's
// posix_spawn closefrom, systemd); there is deliberately no `platforms:` line, because SwiftPM
// can only name Apple platforms there (see docs/decisions.md, "Compiler-kept layers").
// The targets form strict layers:
//
//   CLibcrypto + COpenSSLShims  C: libcrypto (Debian libssl-dev) and the macros Swift cannot import
//   CPKCS11                     C: the OASIS PKCS#11 header (Debian libp11-kit-dev), for tokens (§5.7)
//   CLibfido2                   C: libfido2 (Debian libfido2-dev), FIDO2 security keys, for the CLI only
//   StepSignCrypto              the only Swift module that touches an OpenSSL pointer or a PKCS#11 handle
//   StepSignProtocol            the wire protocol, dependency-free: JSON (one parser, one writer, one
//                               escaper), typed requests, replies, events, codes, the policy's JSON
//   StepSignFormat              what stepsign produces: signature claims, ledger hash chain
//   StepSignConfig              the TOML configuration, with file/line/key errors, the policy checker
//   StepSignCommonPasswords     the built-in common-password list, only for those who check passwords
//   StepSignSystem              system-call helpers: EINTR retries, a thread as a TaskExecutor
//   StepSignStorage             credentials, counters, keys and the ledger: four async protocols (SQLite)
//   StepSignPostgres            the same protocol on a shared PostgreSQL (PostgresNIO), for several daemons
//   StepSignEngine              flows, authentication matrix, attempts, signer, ledger writer
//   StepSignServer              the Unix-socket line protocol (SwiftNIO)
//   StepSignClient              a small blocking client of that protocol, for the CLI and tests
//   CSystemShims                system calls Swift cannot import (prctl, pipe2, posix_spawn closefrom)
//   CLoadgenShims               <sys/epoll.h>, for the load generator only
//   StepSignVersion             the version every binary reports (and the Debian package's)
//   StepSignNIO                 SwiftNIO helpers both servers share (a task executor on an event loop)
//   StepSignLogClient           a log published as C2SP tlog-tiles, read from a directory or a URL, and checked
//   StepSignWitness             a C2SP tlog-witness: the checks, its durable state, its HTTP server
//                               (SwiftNIO's HTTP/1.1), and the client side's request and reply
//   StepSignDaemonProgram, StepSignCLIProgram, StepSignVerifyProgram, StepSignWitnessProgram,
//   StepSignWitnessdProgram     the programs, each a library with a `…Main.main()`:
//     stepsignd, stepsign, stepsign-verify
//     stepsign-witness          a witness of one's own (`serve`, `key`)
//     stepsign-witnessd         submits the daemon's checkpoints to the [[witness]]es (AsyncHTTPClient)
//   stepsignd, stepsign, …      one executable per program, a main.swift each (development, tests)
//   stepsign-multicall          all five in one binary, chosen by argv[0]: what the package installs
//   stepsign-loadgen            the load generator of scripts/bench (not installed)
import PackageDescription

let package = Package(
    name: "stepsign",
    products: [
        .executable(name: "stepsignd", targets: ["stepsignd"]),
        .executable(name: "stepsign", targets: ["stepsign"]),
        .executable(name: "stepsign-verify", targets: ["stepsign-verify"]),
        .executable(name: "stepsign-witness", targets: ["stepsign-witness"]),
        .executable(name: "stepsign-witnessd", targets: ["stepsign-witnessd"]),
        .executable(name: "stepsign-multicall", targets: ["stepsign-multicall"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibcrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "COpenSSLShims", dependencies: ["CLibcrypto"]),
        // The OASIS PKCS#11 header (Debian libp11-kit-dev); the token's module is dlopen'ed at start.
        .systemLibrary(name: "CPKCS11", providers: [.apt(["libp11-kit-dev"])]),
        // FIDO2 security keys (SPEC 5.7): the CLI asks them; the daemon only verifies (libcrypto).
        .systemLibrary(
            name: "CLibfido2",
            pkgConfig: "libfido2",
            providers: [.apt(["libfido2-dev"])]
        ),
        .target(name: "CSystemShims"),
        // <sys/epoll.h> for the load generator only; header-only, so a module map and no C file.
        .systemLibrary(name: "CLoadgenShims"),
        .target(name: "StepSignVersion"),
        // SwiftNIO helpers of the two servers (the daemon's socket, the witness's HTTP).
        .target(name: "StepSignNIO", dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        .target(
            name: "StepSignCrypto",
            dependencies: ["CLibcrypto", "COpenSSLShims", "CPKCS11", "StepSignProtocol"]
        ),
        .target(name: "StepSignProtocol"),
        // The daemon's metrics: names, help texts, buckets, and helpers on the swift-metrics API.
        .target(name: "StepSignMetrics", dependencies: [.product(name: "Metrics", package: "swift-metrics")]),
        // Their Prometheus exposition: swift-metrics on swift-prometheus's registry, `GET /metrics`.
        .target(
            name: "StepSignMetricsServer",
            dependencies: [
                "StepSignMetrics", "StepSignNIO",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(name: "StepSignFormat", dependencies: ["StepSignCrypto", "StepSignProtocol"]),
        .target(name: "StepSignConfig", dependencies: ["StepSignProtocol", "StepSignSystem"]),
        // The built-in common-password list (19,640 lines), apart so that only the modules that
        // check passwords link it.
        .target(name: "StepSignCommonPasswords", dependencies: ["StepSignConfig"]),
        .target(
            name: "StepSignStorage",
            dependencies: [
                "StepSignFormat", "StepSignCrypto", "StepSignSystem",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The SQLite C API under GRDB, for the ledger's inserts (SQLiteParameters).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "StepSignPostgres",
            dependencies: [
                "StepSignStorage", "StepSignFormat", "StepSignCrypto", "StepSignConfig", "StepSignMetrics",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "StepSignEngine",
            dependencies: [
                "StepSignProtocol", "StepSignCrypto", "StepSignFormat", "StepSignConfig", "StepSignCommonPasswords",
                "StepSignStorage", "CSystemShims", "StepSignSystem",
                "StepSignVersion", "StepSignMetrics",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "StepSignServer",
            dependencies: [
                "StepSignEngine", "StepSignFormat", "StepSignProtocol", "CSystemShims", "StepSignNIO", "StepSignMetrics",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // System-call helpers every module that reads and writes descriptors shares.
        .target(name: "StepSignSystem", dependencies: ["CSystemShims"]),
        .target(name: "StepSignClient", dependencies: ["StepSignProtocol", "StepSignSystem"]),
        .target(
            name: "StepSignDaemonProgram",
            dependencies: [
                "StepSignServer", "StepSignEngine", "StepSignProtocol", "StepSignCrypto", "StepSignFormat", "StepSignConfig",
                "StepSignStorage", "StepSignPostgres", "StepSignMetrics", "StepSignMetricsServer",
                "CSystemShims", "StepSignVersion", "StepSignSystem",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "StepSignCLIProgram",
            dependencies: [
                "StepSignClient", "StepSignProtocol", "StepSignCrypto", "StepSignFormat", "StepSignVersion", "StepSignSystem",
                "StepSignLogClient", "CLibfido2",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "StepSignVerifyProgram",
            dependencies: [
                "StepSignCrypto", "StepSignFormat", "StepSignProtocol", "StepSignVersion", "StepSignSystem", "StepSignLogClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "StepSignWitness",
            dependencies: [
                "StepSignFormat", "StepSignCrypto", "StepSignSystem", "StepSignNIO",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Reading a log published as C2SP tlog-tiles, from a directory or over HTTP(S), and
        // checking it against its checkpoint: for stepsign-verify log and stepsign monitor.
        .target(
            name: "StepSignLogClient",
            dependencies: [
                "StepSignFormat", "StepSignCrypto", "StepSignProtocol", "StepSignSystem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "StepSignWitnessProgram",
            dependencies: [
                "StepSignWitness", "StepSignFormat", "StepSignCrypto", "StepSignVersion", "StepSignSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "StepSignWitnessdProgram",
            dependencies: [
                "StepSignWitness", "StepSignClient", "StepSignProtocol", "StepSignFormat", "StepSignCrypto",
                "StepSignConfig", "StepSignVersion", "StepSignSystem",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(name: "stepsignd", dependencies: ["StepSignDaemonProgram"]),
        .executableTarget(name: "stepsign", dependencies: ["StepSignCLIProgram"]),
        .executableTarget(name: "stepsign-verify", dependencies: ["StepSignVerifyProgram"]),
        .executableTarget(name: "stepsign-witness", dependencies: ["StepSignWitnessProgram"]),
        .executableTarget(name: "stepsign-witnessd", dependencies: ["StepSignWitnessdProgram"]),
        // What the Debian package installs: the five programs in one binary, chosen by argv[0].
        .executableTarget(
            name: "stepsign-multicall",
            dependencies: ["StepSignDaemonProgram", "StepSignCLIProgram", "StepSignVerifyProgram",
                           "StepSignWitnessProgram", "StepSignWitnessdProgram"]
        ),
        // The load generator of scripts/bench: POSIX sockets and epoll, StepSignCrypto for scrypt and ES256,
        // StepSignFormat for the offline proof checks.
        .executableTarget(
            name: "stepsign-loadgen",
            dependencies: ["StepSignCrypto", "StepSignFormat", "CLoadgenShims", "StepSignSystem",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // libFuzzer target over request decoding and the engine (scripts/fuzz); built normally
        // it replays corpus and regression files (the regression test runs it).
        .executableTarget(
            name: "stepsign-fuzz",
            dependencies: [
                "StepSignEngine", "StepSignProtocol", "StepSignConfig", "StepSignStorage",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "StepSignTestSupport", dependencies: ["CSystemShims"], path: "Tests/StepSignTestSupport"),
        // The engine on a real store for tests: the engine tests and the in-process side of the
        // integration scenarios (one scenario, run in-process and against the real daemon).
        .target(
            name: "StepSignEngineTestSupport",
            dependencies: [
                "StepSignEngine", "StepSignConfig", "StepSignStorage", "StepSignTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/StepSignEngineTestSupport"
        ),
        .testTarget(name: "StepSignCryptoTests", dependencies: ["StepSignCrypto", "StepSignTestSupport"]),
        .testTarget(name: "StepSignProtocolTests", dependencies: ["StepSignProtocol"]),
        .testTarget(
            name: "StepSignFormatTests",
            dependencies: ["StepSignFormat", "StepSignCrypto", "StepSignTestSupport", "stepsign-verify"]
        ),
        .testTarget(name: "StepSignConfigTests", dependencies: ["StepSignConfig", "StepSignProtocol", "StepSignCommonPasswords"]),
        .testTarget(name: "StepSignSystemTests", dependencies: ["StepSignSystem"]),
        .testTarget(
            name: "StepSignStorageTests",
            dependencies: [
                "StepSignStorage", "StepSignPostgres", "StepSignCrypto", "StepSignFormat", "StepSignTestSupport",
                "StepSignConfig",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "StepSignEngineTests",
            dependencies: [
                "StepSignEngine", "StepSignProtocol", "StepSignCrypto", "StepSignFormat", "StepSignConfig", "StepSignStorage",
                "StepSignEngineTestSupport", "StepSignTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "StepSignServerTests",
            dependencies: [
                "StepSignServer", "StepSignEngine", "StepSignProtocol", "StepSignTestSupport", "StepSignNIO",
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "stepsigndTests", dependencies: ["StepSignDaemonProgram"]),
        .testTarget(
            name: "StepSignLogClientTests",
            dependencies: ["StepSignLogClient", "StepSignFormat", "StepSignCrypto", "StepSignProtocol"]
        ),
        .testTarget(
            name: "StepSignWitnessTests",
            dependencies: [
                "StepSignWitness", "StepSignFormat", "StepSignCrypto", "StepSignTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "StepSignIntegrationTests",
            dependencies: [
                "StepSignClient", "StepSignProtocol", "StepSignCrypto", "StepSignFormat", "StepSignTestSupport",
                "StepSignEngineTestSupport", "StepSignEngine", "StepSignConfig", "StepSignStorage", "StepSignPostgres",
            ]
        ),
    ]
)
