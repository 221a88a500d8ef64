"""`df.save(path)` of a function whose globals hold scipy.stats distributions (issue 13): the
saved module imports them by name (`from scipy.stats import norm`), as the user's module did,
and gives the same gradient when imported in a fresh interpreter (no dualtape imported); an
object no package's public module holds is refused, naming it and the fix."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dualtape.transforms as dt
from dualtape.transforms import TransformError

pytest.importorskip("scipy.stats")

SOURCE = textwrap.dedent('''
    import numpy as np
    import scipy.stats as st
    from scipy.stats import norm

    dist = norm  # an alias: saved as `from scipy.stats import norm as dist`
    rng = np.random.default_rng(0)


    def logpdf_sum(x):
        return np.sum(norm.logpdf(x, 0.5, 2.0))


    def mixed(x):
        # gamma.logcdf's derivative runs the gamma density's NumPy code (scipy.special as `sc`)
        return np.sum(dist.pdf(x, 0.5, 2.0) * st.gamma.logcdf(x + 2.0, 2.0) + st.t.cdf(x, 3.0))


    def noisy(x):
        return np.sum(x * rng.standard_normal())
''')

X = np.array([0.3, 1.2, -0.7])


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("scipy_user") / "stats_user.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("stats_user", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_fresh(path, name):
    """The saved module's gradient at X, computed in a fresh interpreter that never imports dualtape."""
    code = textwrap.dedent(f'''
        import importlib.util, json, sys
        import numpy as np
        spec = importlib.util.spec_from_file_location("saved", {str(path)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out = module.{name}_vjp(np.array({X.tolist()!r}))
        assert not any(m.startswith("dualtape") for m in sys.modules), "the saved module imported dualtape"
        print(json.dumps(np.asarray(out).tolist()))
    ''')
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return np.array(json.loads(result.stdout))


@pytest.mark.parametrize("name, imports", [
    ("logpdf_sum", ["from scipy.stats import norm"]),
    ("mixed", ["from scipy.stats import norm as dist", "import scipy.stats as st", "import scipy.special as sc"]),
])
def test_saved_module_imports_scipy_stats_distributions(user_module, tmp_path, name, imports):
    df = dt.grad(getattr(user_module, name))
    path = tmp_path / f"{name}_saved.py"
    df.save(path)
    lines = path.read_text().splitlines()
    for line in imports:
        assert line in lines
    np.testing.assert_allclose(_run_fresh(path, name), df(X), rtol=1e-13)


def test_an_object_no_module_holds_is_refused(user_module, tmp_path):
    with pytest.raises(TransformError, match=r"(?s)\[save\] cannot write the value of `rng` \(Generator\).*"
                                             r"Pass it as an argument"):
        dt.grad(user_module.noisy).save(tmp_path / "noisy_saved.py")
