/// Why a witness could not start: its state directory, its name or a log key (exit 78 from the
/// CLI, as a configuration error).
public struct WitnessSetupError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
