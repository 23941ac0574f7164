"""The doctor's removed-apis check: it names the inventory entries that have no shim (with
what to do), the opt-in shims (with how to enable them) and the missing dependencies, only
where the library is installed at or after the removing release."""

from __future__ import annotations

import subprocess
import sys

from compatfix import inventory
from compatfix.doctor import check_removed_apis, run_checks

NOTHING = {}.get  # no distribution installed


def summaries(findings):
    return [f.summary for f in findings]


def test_names_each_unshimmed_entry_of_an_installed_library_with_what_to_do():
    findings = check_removed_apis({"torch": "2.14.1"}, python=(3, 8), installed=NOTHING)
    unshimmed = [r for r in inventory.REMOVALS if r.library == "torch" and r.reason]
    assert unshimmed, "the inventory has torch entries without a shim"
    infos = [f for f in findings if "has no compatfix shim" in f.summary]
    assert len(infos) == len(unshimmed)
    for removal, finding in zip(unshimmed, infos):
        assert finding.check == "removed-apis" and finding.severity == "info"
        assert removal.names in finding.summary and "torch 2.14.1" in finding.summary
        assert finding.advice == "What to do: %s." % removal.reason


def test_entries_with_a_default_shim_are_not_named():
    findings = check_removed_apis({"torch": "2.14.1"}, python=(3, 8), installed=NOTHING)
    assert not any("torch.symeig" in s or "torch.rfft" in s for s in summaries(findings))


def test_opt_in_shims_say_how_to_enable_them():
    findings = check_removed_apis({"scikit-image": "0.26.0"}, python=(3, 8), installed=NOTHING)
    [finding] = [f for f in findings if "restored only on request" in f.summary]
    assert "--enable skimage.metrics.ssim_data_range" in finding.advice


def test_a_library_older_than_the_removal_or_absent_is_not_named():
    assert check_removed_apis({"scikit-learn": "0.22.2"}, python=(3, 8), installed=NOTHING) == []
    assert check_removed_apis({}, python=(3, 8), installed=NOTHING) == []
    # torch 1.7 still had torch.fft(...) as a function and no "only boolean masks" errors from 1.8's
    # entry on; the 1.2/1.5 entries apply.
    names = summaries(check_removed_apis({"torch": "1.7.1"}, python=(3, 8), installed=NOTHING))
    assert not any("torch.fft(x" in s for s in names) and any("bool_tensor" in s for s in names)


def test_python_entries_follow_the_interpreter_and_missing_dependencies_warn():
    py313 = check_removed_apis({}, python=(3, 13), installed=NOTHING)
    warnings = [f for f in py313 if f.severity == "warning"]
    # imp, distutils, imghdr/pipes/cgi: their redistributions are declared but absent here
    assert len(warnings) == 3
    assert any("standard-imghdr, standard-pipes, legacy-cgi" in f.summary for f in warnings)
    assert all("pip install" in f.advice for f in warnings)
    installed = {"zombie-imp": "0.0.2", "standard-distutils": "3.11.9", "standard-imghdr": "3.13.0",
                 "standard-pipes": "3.13.0", "legacy-cgi": "2.6.3"}.get
    assert [f for f in check_removed_apis({}, python=(3, 13), installed=installed) if f.severity == "warning"] == []
    assert not any("imghdr" in s for s in summaries(check_removed_apis({}, python=(3, 12), installed=NOTHING)))
    assert any("telnetlib" in s for s in summaries(py313))  # undeclared PEP 594 modules: info


def test_the_real_environment():
    # This stack's torch, numpy and Python: the check runs through run_checks and `compatfix doctor`.
    findings = [f for f in run_checks() if f.check == "removed-apis"]
    assert any("torch." in f.summary for f in findings)
    assert all(f.severity == "info" for f in findings)  # the modern stack has its dependencies
    result = subprocess.run([sys.executable, "-m", "compatfix.cli", "doctor"], capture_output=True, text=True)
    assert "[removed-apis]" in result.stdout, result.stderr
