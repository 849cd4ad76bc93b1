/// The entry point of `stepsignd`: its own executable and the name `stepsignd` of the
/// multi-call binary (`stepsign-multicall`) call it.
public enum StepsigndMain {
    /// Parses `CommandLine.arguments` and runs the daemon; exits the process when done.
    public static func main() async {
        await StepSignDaemon.main()
    }
}
