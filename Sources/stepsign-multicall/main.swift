// The multi-call binary of the package: stepsign, stepsignd, stepsign-verify, stepsign-witness
// and stepsign-witnessd in one file, chosen by argv[0] (docs/packaging.md).
import StepSignCLIProgram
import StepSignDaemonProgram
import StepSignVerifyProgram
import StepSignWitnessProgram
import StepSignWitnessdProgram

switch MulticallProgram(argv0: CommandLine.arguments.first ?? "stepsign") {
case .stepsignd: await StepsigndMain.main()
case .stepsign: await StepsignMain.main()
case .stepsignVerify: await StepsignVerifyMain.main()
case .stepsignWitness: await StepsignWitnessMain.main()
case .stepsignWitnessd: await StepsignWitnessdMain.main()
}
