// `stepsign-witness` on its own (development and tests); the package installs the multi-call
// binary (`stepsign-multicall`).
import StepSignWitnessProgram

await StepsignWitnessMain.main()
