// `stepsign-verify` on its own (development, tests, an auditor's machine); the package installs the multi-call
// binary (`stepsign-multicall`).
import StepSignVerifyProgram

await StepsignVerifyMain.main()
