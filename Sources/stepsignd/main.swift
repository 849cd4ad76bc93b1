// `stepsignd` on its own (development and tests); the package installs the multi-call
// binary (`stepsign-multicall`).
import StepSignDaemonProgram

await StepsigndMain.main()
