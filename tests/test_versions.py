"""Version gating on the versions this field really has."""

import pytest

from compatfix._versions import in_range, release_tuple


@pytest.mark.parametrize(
    "version, expected",
    [
        ("2.3.0a0+ebedce2", (2, 3)),
        ("2.1.0+cu121", (2, 1)),
        ("1.26.0.dev0", (1, 26)),
        ("1.3.0rc1", (1, 3)),
        ("0.3.2", (0, 3, 2)),
        ("v1.7.2", (1, 7, 2)),
        ("2", (2,)),
    ],
)
def test_release_tuple(version, expected):
    assert release_tuple(version) == expected


@pytest.mark.parametrize(
    "version, spec, expected",
    [
        ("2.3.0a0+ebedce2", ">=2.3", True),  # an NGC pre-release of 2.3 has 2.3's changes
        ("2.3.0a0+ebedce2", "<2.3", False),
        ("2.1.0+cu121", ">=2.0,<2.2", True),
        ("1.26.0.dev0", ">=1.24", True),
        ("1.23.5", ">=1.24", False),
        ("2.0.0", ">=2.0", True),
        ("2.0", "==2.0.0", True),
        ("1.7.2", "==1.7.*", True),
        ("1.8.0", "==1.7.*", False),
        ("1.8.0", "!=1.7.*", True),
        ("1.3.0", ">1.3", False),
        ("1.3.1", ">1.3,<=1.3.1", True),
        ("1.3.1", "!=1.3.1", False),
    ],
)
def test_in_range(version, spec, expected):
    assert in_range(version, spec) is expected


@pytest.mark.parametrize("bad", ["~=1.2", ">=", "latest"])
def test_bad_ranges_are_rejected(bad):
    with pytest.raises(ValueError):
        in_range("1.0", bad)
