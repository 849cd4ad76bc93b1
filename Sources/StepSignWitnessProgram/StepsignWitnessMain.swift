/// The entry point of `stepsign-witness`: its own executable and the name `stepsign-witness`
/// of the multi-call binary (`stepsign-multicall`) call it.
public enum StepsignWitnessMain {
    /// Parses `CommandLine.arguments` and runs the command; exits the process when done.
    public static func main() async {
        await StepSignWitnessCLI.main()
    }
}
