// `stepsign-witnessd` on its own (development and tests); the package installs the multi-call
// binary (`stepsign-multicall`).
import StepSignWitnessdProgram

await StepsignWitnessdMain.main()
