#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import StepSignClient
import StepSignCrypto
import StepSignFormat
import StepSignLogClient
import StepSignProtocol
import StepSignSystem

/// `stepsign monitor --state FILE [--tiles DIR | --url URL] …`: follows the log (SPEC §5.6),
/// checks each new checkpoint against the last one seen and every new entry, prints each
/// signature and event as a JSON line, and raises an alarm at the first thing that is wrong.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Follow the log: check each checkpoint and entry, print each as a JSON line, alarm on anything wrong.",
        discussion: """
            The log is read from the daemon's socket (an admin peer: admin.exportLedger), from a \
            tiles directory (ledger.tiles_dir) or from a URL publishing one. Each new checkpoint \
            must verify with a --log-key and grow from the tree of the last one seen (kept in \
            --state, with the users and keys the log's events brought in); each new entry must \
            verify with a trusted key (--keys, or the daemon's getPublicKeys on the socket), not \
            be a revoked key's after its revocation, and, once the log has events, name only \
            users and keys that an event brought in.

            An alarm is printed on standard error at critical (with JOURNAL_STREAM set, as \
            <2>), given to --exec CMD (run with /bin/sh -c, the alarm as one JSON object on its \
            standard input), and ends the monitor with exit 1; the state keeps the last good \
            checkpoint. Exit 0: stopped (--once: caught up); 2 bad usage; 75 (--once) the log \
            could not be read now.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The monitor's state file (made on first run; keep it).", valueName: "file"))
    var state: String

    @Option(help: ArgumentHelp("Follow a tiles directory instead of the socket.", valueName: "dir"))
    var tiles: String?

    @Option(help: ArgumentHelp("Follow a log published at this http(s):// prefix instead of the socket.", valueName: "url"))
    var url: String?

    @Option(name: .customLong("log-key"), help: ArgumentHelp(
        "A log key trusted to sign checkpoints (name+hex8+base64), or a file of them; repeatable. Default on the socket: the daemon's getPublicKeys.logKeys.",
        valueName: "vkey"))
    var logKeys: [String] = []

    @Option(help: ArgumentHelp("The trusted signing keys (JWKS or PEM, as stepsign keys export writes them). Default on the socket: the daemon's getPublicKeys.", valueName: "file"))
    var keys: String?

    @Option(help: ArgumentHelp("Seconds between polls.", valueName: "seconds"))
    var interval: Int = 10

    @Flag(help: "Catch up once and exit.")
    var once = false

    @Option(name: .customLong("exec"), help: ArgumentHelp("Run this command (with /bin/sh -c) on an alarm, the alarm as JSON on its stdin.", valueName: "cmd"))
    var exec: String?

    @Option(name: .customLong("accept"), help: ArgumentHelp(
        "Accept a user or key that a log from before events never brought in (user:NAME or kid:KID), after review; repeatable.",
        valueName: "user:NAME|kid:KID"))
    var accepted: [String] = []

    func validate() throws {
        guard tiles == nil || url == nil else { throw ValidationError("--tiles and --url are two sources; give one") }
        guard interval > 0 else { throw ValidationError("--interval must be positive") }
        if tiles != nil || url != nil {
            guard keys != nil, !logKeys.isEmpty else {
                throw ValidationError("following tiles needs --keys and --log-key (only the socket can give them)")
            }
        }
        for item in accepted where !(item.hasPrefix("user:") || item.hasPrefix("kid:")) || item.split(separator: ":", maxSplits: 1).count < 2 {
            throw ValidationError("--accept takes user:NAME or kid:KID, not \(item)")
        }
        if let url { guard url.hasPrefix("http://") || url.hasPrefix("https://") else { throw ValidationError("--url must be http:// or https://") } }
    }

    func run() async throws {
        let feed = try MonitorFeed(global: global, tiles: tiles, url: url)
        do {
            try await follow(feed)
        } catch {
            await feed.close()
            throw error
        }
        await feed.close()
    }

    private func follow(_ feed: MonitorFeed) async throws {
        let trust: (keys: TrustedKeys, logKeys: [NoteVerifierKey])
        do { trust = try loadTrust(feed) } catch {
            StandardStreams.error("stepsign: \(error)")
            throw ExitCode(CLIError.usage)
        }
        while true {
            let outcome = await round(feed, trust: trust)
            switch outcome {
            case .caughtUp:
                if once { return }
            case let .unavailable(why):
                StandardStreams.error("stepsign monitor: cannot read the log now: \(why)")
                if once { throw ExitCode(75) }
            case let .alarm(alarm, origin, size):
                raise(alarm, origin: origin, size: size)
                throw ExitCode(1)
            }
            try await Task.sleep(for: .seconds(interval))
        }
    }

    enum Outcome {
        case caughtUp
        case unavailable(String)
        case alarm(MonitorAlarm, origin: String?, size: Int64?)
    }

    /// One poll: the checkpoint, then every entry since the last one seen.
    func round(_ feed: MonitorFeed, trust: (keys: TrustedKeys, logKeys: [NoteVerifierKey])) async -> Outcome {
        var saved: MonitorState
        do { saved = try MonitorState.load(state) } catch { return .unavailable("the state file: \(error)") }
        for item in accepted {
            let value = String(item.split(separator: ":", maxSplits: 1)[1])
            if item.hasPrefix("user:") { saved.users.insert(value) } else { saved.kids.insert(value) }
        }
        let note: String
        do { note = try await feed.checkpoint() } catch { return .unavailable("\(error)") }
        let checkpoint: LogCheckpoint
        do {
            let signed = try SignedNote(parsing: note)
            checkpoint = try LogCheckpoint(text: signed.text)
            _ = try signed.verifiedKeys(trust.logKeys.filter { $0.name == checkpoint.origin })
        } catch {
            return .alarm(MonitorAlarm(.untrustedCheckpoint, "the checkpoint does not verify with a trusted log key: \(error)"),
                          origin: nil, size: nil)
        }
        let origin = checkpoint.origin, size = checkpoint.size
        if let seen = saved.origin, seen != origin {
            return .alarm(MonitorAlarm(.inconsistentCheckpoint, "the log's origin is now \(origin), not \(seen)"), origin: origin, size: size)
        }
        if size == saved.frontier.size, saved.origin != nil {
            guard checkpoint.rootHash == saved.frontier.root else {
                return .alarm(MonitorAlarm(.inconsistentCheckpoint, "a checkpoint of size \(size) with another root than the one seen"),
                              origin: origin, size: size)
            }
            return .caughtUp
        }
        var monitor = LogMonitor(state: saved, keys: trust.keys)
        let frontier: MerkleFrontier
        do {
            frontier = try await feed.entries(checkpoint: checkpoint, from: saved.frontier) { index, entry in
                let line = try monitor.check(index: index, entry: entry)
                StandardStreams.out(String(decoding: line.jsonBytes, as: UTF8.self))
            }
        } catch let alarm as MonitorAlarm {
            return .alarm(alarm, origin: origin, size: size)
        } catch TileError.mismatch(let why) {
            return .alarm(MonitorAlarm(.inconsistentCheckpoint, why), origin: origin, size: size)
        } catch {
            return .unavailable("\(error)")
        }
        var next = monitor.state
        next.origin = origin
        next.frontier = frontier
        do { try next.save(state) } catch { return .unavailable("cannot save the state: \(error)") }
        return .caughtUp
    }

    private func loadTrust(_ feed: MonitorFeed) throws -> (keys: TrustedKeys, logKeys: [NoteVerifierKey]) {
        var logKeyList: [NoteVerifierKey] = []
        for value in logKeys {
            if let key = try? NoteVerifierKey(value) {
                logKeyList.append(key)
                continue
            }
            let text = try String(contentsOfFile: value, encoding: .utf8)
            for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") && !line.isEmpty {
                logKeyList.append(try NoteVerifierKey(String(line)))
            }
        }
        let published = (keys == nil || logKeyList.isEmpty) ? try feed.publicKeys() : nil
        let trusted = try keys.map { try TrustedKeys(parsing: try String(contentsOfFile: $0, encoding: .utf8)) }
            ?? published!.keys
        return (trusted, logKeyList.isEmpty ? published!.logKeys : logKeyList)
    }

    /// The alarm: a critical line on stderr and `--exec`.
    private func raise(_ alarm: MonitorAlarm, origin: String?, size: Int64?) {
        let json = String(decoding: alarm.json(origin: origin, treeSize: size).sortingKeys.jsonBytes, as: UTF8.self)
        let prefix = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil ? "<2>" : ""
        StandardStreams.error(prefix + "stepsign monitor: ALARM " + json)
        guard let exec else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", exec]
        let input = Pipe()
        process.standardInput = input
        do {
            try process.run()
            input.fileHandleForWriting.write(Data((json + "\n").utf8))
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        } catch {
            StandardStreams.error("stepsign monitor: --exec could not run: \(error)")
        }
    }
}
