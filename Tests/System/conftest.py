"""The boot test is one story told in order (install, enable, sign, reload, …, remove): once a
step fails, the steps after it are not run (reported as skipped, naming the failed step; the
run fails with that step) instead of failing later for a reason that hides the first. A failed
step's report carries the end of the container's journal for stepsignd."""
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed:
        item.module.first_failure = item.name
        box = item.funcargs.get("box")
        if box is not None and box.pid1 is not None:
            try:
                journal = box.run(["journalctl", "--no-pager", "-n", "60", "_SYSTEMD_UNIT=stepsignd.service",
                                   "+", "UNIT=stepsignd.service", "+", "UNIT=stepsignd.socket"],
                                  check=False, timeout=30)
                report.sections.append(("journal of stepsignd (last 60 lines)", journal.stdout + journal.stderr))
            except Exception as error:  # the report must not hide the failure itself
                report.sections.append(("journal of stepsignd", f"could not read it: {error}"))


def pytest_runtest_setup(item):
    failed = getattr(item.module, "first_failure", None)
    if failed is not None:
        pytest.skip(f"not run: the earlier step {failed} failed")
