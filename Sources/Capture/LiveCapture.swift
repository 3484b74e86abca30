import Glibc
import Wire

/// Monotonic clock in nanoseconds, for deadlines.
func monotonicNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
}

/// Where SIGINT/SIGTERM are reported: the write end of the active `StopSwitch`'s pipe.
nonisolated(unsafe) private var signalStopFD: Int32 = -1

/// A request to stop, from a signal or from another thread, that wakes a `poll`: a self-pipe.
/// The signal handler only writes the signal number into the pipe (async-signal-safe).
public final class StopSwitch: @unchecked Sendable {
    /// Read end: readable once stop was requested.
    public let fd: Int32
    private let writeFD: Int32
    /// The signal that asked to stop, once read from the pipe.
    public private(set) var signal: Int32?
    public private(set) var triggered = false

    public init() {
        (fd, writeFD) = nonBlockingPipe()
    }

    deinit {
        if signalStopFD == writeFD { signalStopFD = -1 }
        close(fd)
        close(writeFD)
    }

    /// Asks to stop; safe from any thread.
    public func trigger() {
        var b: UInt8 = 0
        _ = Glibc.write(writeFD, &b, 1)
    }

    /// Routes `signals` here (default SIGINT and SIGTERM); SIGPIPE is ignored so a closed output
    /// shows up as a write error instead of ending the process.
    public func catchSignals(_ signals: [Int32] = [SIGINT, SIGTERM]) {
        signalStopFD = writeFD
        Glibc.signal(SIGPIPE, SIG_IGN)
        for s in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in
                var b = UInt8(truncatingIfNeeded: sig)
                let fd = signalStopFD
                if fd >= 0 { _ = Glibc.write(fd, &b, 1) }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(s, &action, nil)
        }
    }

    /// Reads what the pipe holds; true when stop was requested (now or before).
    @discardableResult
    public func check() -> Bool {
        var b: UInt8 = 0
        while read(fd, &b, 1) == 1 {
            triggered = true
            if b != 0, signal == nil { signal = Int32(b) }
        }
        return triggered
    }

    /// Waits until `other` is readable (or hung up); false when stop was requested first or the
    /// deadline (monotonic ns) passed.
    public func wait(readable other: Int32, deadline: Int64? = nil) -> Bool {
        while !check() {
            var fds = [pollfd(fd: other, events: Int16(POLLIN), revents: 0), pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline &- monotonicNow()
                if left <= 0 { return false }
                timeout = Int32(clamping: (left &+ 999_999) / 1_000_000)
            }
            let n = poll(&fds, 2, timeout)
            if n < 0 && errno != EINTR { return false }
            if fds[0].revents != 0 { return !check() }
        }
        return false
    }
}

/// A pipe with both ends non-blocking and closed on exec.
func nonBlockingPipe() -> (read: Int32, write: Int32) {
    var p: [Int32] = [-1, -1]
    guard pipe(&p) == 0 else { return (-1, -1) }
    for fd in p {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return (p[0], p[1])
}

/// Records handed from the reading thread to the main one: a locked list and a pipe that
/// becomes readable when records (or the end) are waiting.
final class RecordQueue: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var roomFree = pthread_cond_t()
    private var records: [Record] = []
    private(set) var ended = false
    private(set) var error: CaptureError?
    /// Records waiting beyond this make the reading thread wait: memory stays bounded when the
    /// consumer (a slow terminal) falls behind; the kernel then buffers or counts drops.
    let limit = 100_000
    let wakeFD: Int32
    private let notifyFD: Int32

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&roomFree, nil)
        (wakeFD, notifyFD) = nonBlockingPipe()
    }

    deinit {
        pthread_cond_destroy(&roomFree)
        pthread_mutex_destroy(&mutex)
        close(wakeFD)
        close(notifyFD)
    }

    /// A full pipe is already readable, so a failed write loses nothing.
    private func wake() {
        var b: UInt8 = 1
        _ = Glibc.write(notifyFD, &b, 1)
    }

    func push(_ r: Record) {
        pthread_mutex_lock(&mutex)
        while records.count >= limit { pthread_cond_wait(&roomFree, &mutex) }
        records.append(r)
        pthread_mutex_unlock(&mutex)
        wake()
    }

    func finish(_ e: CaptureError?) {
        pthread_mutex_lock(&mutex)
        ended = true
        error = e
        pthread_mutex_unlock(&mutex)
        wake()
    }

    /// Everything waiting, and whether the source has ended (after these records).
    func take() -> (records: [Record], ended: Bool, error: CaptureError?) {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(wakeFD, $0.baseAddress, $0.count) }) > 0 {}
        pthread_mutex_lock(&mutex)
        let out = records
        records = []
        let result = (out, ended, error)
        pthread_cond_signal(&roomFree)
        pthread_mutex_unlock(&mutex)
        return result
    }
}

/// The reading thread's state; retained by the thread for as long as it runs.
private final class Reader: @unchecked Sendable {
    let source: RecordSource
    let queue: RecordQueue

    init(source: RecordSource, queue: RecordQueue) {
        self.source = source
        self.queue = queue
    }

    func run() {
        while true {
            do {
                guard var r = try source.next() else { queue.finish(nil); return }
                // The source reuses its buffer: the record is copied before it crosses threads.
                r.data = ArraySlice(Array(r.data))
                queue.push(r)
            } catch {
                queue.finish(error)
                return
            }
        }
    }
}

/// Runs a capture: a thread blocks in the source's `next()` and hands records over, while the
/// calling thread waits in `poll` for records, a stop request (signal) or a deadline, and
/// handles each record. A blocked read never delays stopping, and stopping loses nothing that
/// was read: what is queued, and whatever arrives within `grace`, is still handled.
public final class LiveCapture {
    public enum End: Equatable, Sendable {
        /// The source ended (end of stream); `error` when it failed.
        case sourceEnded(error: CaptureError?)
        /// Stop was requested; the signal when one asked.
        case stopped(signal: Int32?)
        case deadline
        /// The handler asked to stop (a frame count reached).
        case handlerStopped
    }

    public let name: String
    private let queue = RecordQueue()
    private var reader: Reader?
    /// Records taken from the queue but not yet handled (the handler stopped mid-batch).
    private var backlog: [Record] = []
    private var backlogStart = 0
    private var sourceEnd: (ended: Bool, error: CaptureError?) = (false, nil)
    /// After a stop request, records are still handled until none has arrived for this long
    /// (nanoseconds): what was read before the stop is not lost.
    public var grace: Int64 = 20_000_000
    /// ... but for no longer than this after the stop.
    public var maxDrain: Int64 = 1_000_000_000

    public init(source: RecordSource) {
        name = source.name
        reader = Reader(source: source, queue: queue)
    }

    private func start() {
        guard let reader else { return }
        self.reader = nil
        let context = Unmanaged.passRetained(reader).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { ctx in
            guard let ctx else { return nil }
            let r = Unmanaged<Reader>.fromOpaque(ctx).takeRetainedValue()
            r.run()
            return nil
        }, context)
        if rc == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Reader>.fromOpaque(context).release()
            queue.finish(CaptureError(.io, file: name, "cannot start the reading thread"))
        }
    }

    /// Handles records until the source ends, `stop` is triggered, `deadline` (monotonic ns, see
    /// `LiveCapture.deadline(after:)`) passes or `handle` returns false. May be called again
    /// afterwards to go on with the same source.
    /// - Parameters:
    ///   - handle: called for each record in order; false stops after this record.
    ///   - batchDone: called after each group of records handled (flush output there).
    public func run(stop: StopSwitch?, deadline: Int64? = nil,
                    handle: (Record) throws -> Bool, batchDone: () -> Void = {}) rethrows -> End {
        start()
        if try !drainBacklog(handle) { batchDone(); return .handlerStopped }
        if sourceEnd.ended { return .sourceEnded(error: sourceEnd.error) }
        var fds = [pollfd(fd: queue.wakeFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stop?.fd ?? -1, events: Int16(POLLIN), revents: 0)]
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline &- monotonicNow()
                if left <= 0 { return try finishing(.deadline, handle, batchDone) }
                timeout = Int32(clamping: (left &+ 999_999) / 1_000_000)
            }
            fds[0].revents = 0
            fds[1].revents = 0
            let n = poll(&fds, 2, timeout)
            if n < 0 && errno != EINTR {
                return .sourceEnded(error: CaptureError(.io, file: name, "poll failed: \(String(cString: strerror(errno)))"))
            }
            if fds[0].revents != 0 {
                if let end = try takeBatch(handle) { batchDone(); return end }
                batchDone()
            }
            if let stop, fds[1].revents != 0, stop.check() {
                return try finishing(.stopped(signal: stop.signal), handle, batchDone)
            }
        }
    }

    /// Handles what was read before the stop and what arrives during the grace period.
    /// Records keep being taken until none has come for `grace`, or for at most `maxDrain`, so
    /// that a busy source cannot hold the capture open.
    private func finishing(_ end: End, _ handle: (Record) throws -> Bool, _ batchDone: () -> Void) rethrows -> End {
        let limit = monotonicNow() &+ maxDrain
        var fd = pollfd(fd: queue.wakeFD, events: Int16(POLLIN), revents: 0)
        while true {
            fd.revents = 0
            let quiet = poll(&fd, 1, Int32(clamping: grace / 1_000_000)) == 0
            let result = try takeBatch(handle)
            batchDone()
            if result == .handlerStopped { return .handlerStopped }
            if quiet || result != nil || monotonicNow() >= limit { return end }
        }
    }

    /// Handles every queued record; the end when the source ended or the handler stopped.
    private func takeBatch(_ handle: (Record) throws -> Bool) rethrows -> End? {
        let batch = queue.take()
        backlog = batch.records
        backlogStart = 0
        if batch.ended { sourceEnd = (true, batch.error) }
        if try !drainBacklog(handle) { return .handlerStopped }
        return batch.ended ? .sourceEnded(error: batch.error) : nil
    }

    private func drainBacklog(_ handle: (Record) throws -> Bool) rethrows -> Bool {
        while backlogStart < backlog.count {
            let r = backlog[backlogStart]
            backlogStart &+= 1
            if try !handle(r) { return false }
        }
        backlog = []
        backlogStart = 0
        return true
    }

    /// The monotonic deadline `seconds` from now.
    public static func deadline(after seconds: Double) -> Int64 {
        let ns = (seconds * 1e9).rounded()
        let span: Int64 = ns >= 9e18 ? Int64.max / 2 : ns <= 0 ? 0 : Int64(ns)
        return monotonicNow() &+ span
    }
}

extension CaptureReader {
    /// Opens a pcap, pcapng or btsnoop stream that may still be being written: a FIFO (opening
    /// does not block waiting for its writer), standard input ("-"), or a file. Waits for the
    /// first bytes, giving up with nil when `stop` is triggered first.
    public static func openStream(path: String, stop: StopSwitch?) throws(CaptureError) -> CaptureReader? {
        let fd: Int32
        let name: String
        if path == "-" {
            fd = STDIN_FILENO
            name = "standard input"
        } else {
            fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                throw CaptureError(.io, file: path, "cannot open: \(String(cString: strerror(errno)))")
            }
            name = path
            // Back to blocking reads: the reading thread waits for data, poll() waits for stop.
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        }
        if let stop, !stop.wait(readable: fd) {
            if path != "-" { close(fd) }
            return nil
        }
        return try CaptureReader(fileDescriptor: fd, name: name, closeWhenDone: path != "-")
    }
}
