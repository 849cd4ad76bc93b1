#if canImport(Glibc)
import Glibc
#endif
import CLibfido2
import StepSignClient

/// `--fido2-device unix:PATH`: libfido2 reaches the security key through a Unix stream socket
/// instead of a hidraw device, a transport for tests and development (a software authenticator
/// such as the interop tests' one; SPEC §5.7). libfido2 still does all of CTAPHID and CTAP2;
/// this only carries its HID reports: 64 bytes each in both directions, what libfido2 writes to
/// a hidraw device without the report ID byte. Nothing from this transport is trusted more
/// than a USB key's answer: the daemon checks every assertion itself.
enum FIDO2UnixSocketTransport {
    static let prefix = "unix:"
    /// The HID report size libfido2 uses with its own I/O functions (CTAP_MAX_REPORT_LEN).
    static let reportLength = 64

    /// libfido2's I/O functions for a `unix:PATH` device; the handle is the connected socket.
    static var functions: fido_dev_io_t {
        fido_dev_io_t(
            open: { cPath in
                guard let cPath else { return nil }
                let path = String(cString: cPath)
                guard path.hasPrefix(FIDO2UnixSocketTransport.prefix),
                      let fd = try? StepSignConnection.connectedSocket(path: String(path.dropFirst(FIDO2UnixSocketTransport.prefix.count)))
                else { return nil }
                let handle = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
                handle.initialize(to: fd)
                return UnsafeMutableRawPointer(handle)
            },
            close: { handle in
                guard let handle else { return }
                let fd = handle.assumingMemoryBound(to: Int32.self)
                Glibc.close(fd.pointee)
                fd.deallocate()
            },
            read: { handle, buffer, length, timeout in
                // One whole report, waiting at most `timeout` ms for each part (-1: no limit).
                guard let handle, let buffer, length == FIDO2UnixSocketTransport.reportLength else { return -1 }
                let fd = handle.assumingMemoryBound(to: Int32.self).pointee
                var done = 0
                while done < length {
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    let ready = poll(&poller, 1, timeout)
                    if ready < 0, errno == EINTR { continue }
                    guard ready > 0 else { return -1 }
                    let got = Glibc.read(fd, buffer + done, length - done)
                    if got < 0, errno == EINTR { continue }
                    guard got > 0 else { return -1 }
                    done += got
                }
                return Int32(length)
            },
            write: { handle, buffer, length in
                // libfido2 writes the report ID (0) first, as hidraw wants it: the socket carries the rest.
                guard let handle, let buffer, length == FIDO2UnixSocketTransport.reportLength + 1 else { return -1 }
                let fd = handle.assumingMemoryBound(to: Int32.self).pointee
                var sent = 1
                while sent < length {
                    let count = Glibc.send(fd, buffer + sent, length - sent, Int32(MSG_NOSIGNAL))
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { return -1 }
                    sent += count
                }
                return Int32(length)
            })
    }
}
