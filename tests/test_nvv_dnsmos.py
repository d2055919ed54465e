"""The shared DNSMOS P.835 provider: the public calibration polynomials by hand (both sets), the
reference's windowing, the nvbench protocol's reading (PCM-16 round trip of MP3, librosa
resampling, no peak scaling) and the SpeechEditBench protocol equal to that benchmark's scorer."""

import io

import numpy as np
import pytest
import soundfile as sf
from conftest import speechlike

from evaluators.measures.dnsmos import (
    NVBENCH,
    SPEECHEDITBENCH,
    DnsmosMeasure,
    DnsmosProtocol,
    calibrate,
    read_nvbench,
    windows,
)


def _horner(coeffs, x):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def test_calibration_is_the_public_polynomials_by_hand():
    raw = np.array([3.0, 3.5, 2.75], dtype=np.float32)
    got = calibrate(raw)
    # dnsmos_local.py non-personalised: p_sig, p_bak, p_ovr (highest degree first)
    assert got["sig"] == pytest.approx(-0.08397278 * 9 + 1.22083953 * 3 + 0.0052439, abs=1e-12)
    assert got["bak"] == pytest.approx(-0.13166888 * 12.25 + 1.60915514 * 3.5 - 0.39604546, abs=1e-12)
    assert got["ovrl"] == pytest.approx(-0.06766283 * 2.75 ** 2 + 1.11546468 * 2.75 + 0.04602535, abs=1e-12)
    p = calibrate(raw, personalized=True)
    assert p["sig"] == pytest.approx(_horner((-0.01019296, 0.02751166, 1.19576786, -0.24348726), 3.0), abs=1e-12)
    assert p["ovrl"] == pytest.approx(_horner((-0.00533021, 0.005101, 1.18058466, -0.11236046), 2.75), abs=1e-12)


def test_windows_as_the_reference():
    assert [len(w) for w in windows(np.ones(5 * 16000))] == [144160]  # doubled to 10 s, one window
    # 20 s: int(20 - 9.01) + 1 = 11 windows, but (i + 9.01) * 16000 truncates one sample short for i = 7..10
    assert len(windows(np.ones(20 * 16000))) == 7
    x = np.arange(160000, dtype=np.float64)
    assert np.array_equal(windows(x)[0], x[:144160])


class _FixedSession:
    """A stand-in P.835 network answering hand-made raw scores, one row per call."""

    def __init__(self, raws):
        self.raws, self.calls = list(raws), 0

    def run(self, _, feeds):
        assert feeds["input_1"].shape == (1, 144160) and feeds["input_1"].dtype == np.float32
        out = np.array([[self.raws[self.calls]]], dtype=np.float32)
        self.calls += 1
        return out


def test_score_averages_calibrated_windows():
    m = DnsmosMeasure(NVBENCH)
    m._sessions = (_FixedSession([[3.0, 3.5, 2.75], [2.0, 4.0, 3.25]] * 4), None)
    (row,) = m.measure([np.zeros(11 * 16000)])  # int(11 - 9.01) + 1 = 2 windows
    a, b = calibrate(np.float32([3.0, 3.5, 2.75])), calibrate(np.float32([2.0, 4.0, 3.25]))
    assert row["n_windows"] == 2 and set(row) == {"sig", "bak", "ovrl", "n_windows"}
    for k in ("sig", "bak", "ovrl"):
        assert row[k] == pytest.approx((a[k] + b[k]) / 2, abs=1e-12)


def test_nvbench_reading(tmp_path):
    x = 0.9 * speechlike(0.4, sr=22050).astype(np.float64)
    sf.write(tmp_path / "a.wav", np.stack([x, 0 * x], 1), 22050, subtype="FLOAT")
    aud, fs = read_nvbench(tmp_path / "a.wav")
    assert fs == 22050 and aud.dtype == np.float64 and np.allclose(aud, x, atol=1e-7)  # first channel
    loud = DnsmosMeasure(NVBENCH).at_16k(np.full(16000, 2.0), 16000)
    assert loud.max() == 2.0  # nvbench does not scale loud clips; SpeechEditBench does
    assert DnsmosMeasure(SPEECHEDITBENCH).at_16k(np.full(16000, 2.0), 16000).max() == 1.0
    import librosa

    assert np.array_equal(DnsmosMeasure(NVBENCH).at_16k(aud, fs), librosa.resample(aud, orig_sr=fs, target_sr=16000))
    sf.write(tmp_path / "b.mp3", x, 22050)
    mp3, fs = read_nvbench(tmp_path / "b.mp3")
    assert fs == 22050 and np.allclose(mp3 * 32768, np.round(mp3 * 32768))  # the script's 16-bit temp WAV


def test_protocol_checks(tmp_path):
    with pytest.raises(ValueError, match="pDNSMOS"):
        DnsmosProtocol("p", personalized=True)
    with pytest.raises(OSError, match="not found"):
        DnsmosProtocol("p", model_path=str(tmp_path / "none.onnx"))
    with pytest.raises(ValueError, match="resampler"):
        DnsmosProtocol("p", resampler="sinc")


def test_speecheditbench_protocol_equals_its_scorer():
    from evaluators.benchmarks.speecheditbench.provider_cache import VALUES

    x = speechlike(3.0, seed=3)
    row = DnsmosMeasure(SPEECHEDITBENCH).measure([x.astype(np.float64)])[0]
    ref = VALUES["dnsmos"](DnsmosMeasure(SPEECHEDITBENCH), [x], "en")[0]
    assert set(ref) == {"sig", "bak", "ovrl", "p808"}
    for k in ("sig", "bak", "ovrl"):
        assert row[k] == pytest.approx(ref[k], abs=1e-9), k
    # the P.808 network's sums differ in the last float32 bits between ONNX thread settings
    assert row["p808"] == pytest.approx(ref["p808"], abs=1e-6)
    nv = DnsmosMeasure(NVBENCH).measure([x.astype(np.float64)])[0]
    for k in ("sig", "bak", "ovrl"):  # float32 vs float64 polynomial arithmetic only
        assert nv[k] == pytest.approx(ref[k], abs=1e-5), k
