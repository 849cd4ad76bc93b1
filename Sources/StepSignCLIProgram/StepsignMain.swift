/// The entry point of `stepsign`: its own executable and the multi-call binary
/// (`stepsign-multicall`, under any name that is not one of the other programs') call it.
public enum StepsignMain {
    /// Parses `CommandLine.arguments` and runs the command; exits the process when done.
    public static func main() async {
        await StepSignCLI.main()
    }
}
