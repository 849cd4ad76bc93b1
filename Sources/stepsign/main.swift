// `stepsign` on its own (development and tests); the package installs the multi-call
// binary (`stepsign-multicall`).
import StepSignCLIProgram

await StepsignMain.main()
