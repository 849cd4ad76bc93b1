/// The entry point of `stepsign-witnessd`: its own executable and the name `stepsign-witnessd`
/// of the multi-call binary (`stepsign-multicall`) call it.
public enum StepsignWitnessdMain {
    /// Parses `CommandLine.arguments` and runs the pusher; exits the process when done.
    public static func main() async {
        await StepSignWitnessd.main()
    }
}
