"""Audio files as benchmark systems really write them: one item's problem is that item's row
with a reason, never a silently chosen file or a misread clip."""

from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from tests.conftest import speechlike


def test_nvv_two_output_files_for_one_item_are_its_error_not_a_silent_pick(tmp_path):
    from evaluators.benchmarks.nvv.scorer import collect_outputs

    out = tmp_path / "outs"
    out.mkdir()
    sf.write(out / "en_0.wav", speechlike(1.0), 16000)
    sf.write(out / "en_0.flac", np.zeros(16000, np.float32), 16000)  # a rerun in another format
    sf.write(out / "en_1.wav", speechlike(1.0, seed=1), 16000)
    items = [SimpleNamespace(id=f"en_{k}") for k in range(2)]  # only the id is looked up
    by = {o.id: o for o in collect_outputs(out, items, system="s")}
    assert by["en_1"].checked_path() == out / "en_1.wav"
    problem = by["en_0"].problem
    assert problem is not None and "en_0.flac" in problem and "en_0.wav" in problem


def test_cast_two_output_files_for_one_item_are_its_error_not_a_silent_pick(tmp_path):
    from evaluators.benchmarks.cast.scorer import collect_outputs

    root = tmp_path / "outs" / "none"
    root.mkdir(parents=True)
    sf.write(root / "i0.wav", speechlike(1.0), 16000)
    sf.write(root / "i0.mp3" if "MP3" in sf.available_formats() else root / "i0.ogg", speechlike(1.0, seed=2), 16000)
    sf.write(root / "i1.wav", speechlike(1.0, seed=1), 16000)
    items = [{"id": f"i{k}", "pair_id": "p", "side": "AB"[k], "sentence": "a b", "stressed_word": "a"}
             for k in range(2)]
    by = {o.id: o for o in collect_outputs(tmp_path / "outs", items, system="s")}
    assert by["i1"].problem is None and by["i1"].path == root / "i1.wav"
    assert by["i0"].problem is not None and "i0.wav" in by["i0"].problem


def _unfinished_header(path, wave, sr, subtype="PCM_16", channels=1):
    """``wave`` written as a streaming writer leaves a WAV it could not seek back into: the RIFF
    and ``data`` chunk sizes still 0."""
    sf.write(path, np.stack([wave] * channels, 1) if channels > 1 else wave, sr, subtype=subtype)
    b = bytearray(path.read_bytes())
    i = b.find(b"data")
    b[4:8] = b[i + 4:i + 8] = bytes(4)
    path.write_bytes(bytes(b))


def test_a_streamed_wav_whose_sizes_were_never_filled_in_is_read_whole(tmp_path):
    from evaluators.audio_io import LongClipWarning, load_audio

    wave = speechlike(1.5, sr=22050)
    sf.write(tmp_path / "whole.wav", np.stack([wave, wave], 1), 22050, subtype="PCM_24")
    _unfinished_header(tmp_path / "streamed.wav", wave, 22050, subtype="PCM_24", channels=2)
    want = load_audio(tmp_path / "whole.wav")
    np.testing.assert_array_equal(load_audio(tmp_path / "streamed.wav"), want)
    with pytest.warns(LongClipWarning):
        assert len(load_audio(tmp_path / "streamed.wav", max_seconds=0.5)) == 8000  # a bounded read stays bounded


def test_an_empty_data_chunk_followed_by_another_chunk_is_still_empty(tmp_path):
    from evaluators.audio_io import AudioLoadError, load_audio

    sf.write(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000)
    b = bytearray((tmp_path / "empty.wav").read_bytes())
    b += b"LIST" + (4000).to_bytes(4, "little") + b"INFO" + bytes(3996)  # tags after the (empty) samples
    b[4:8] = (len(b) - 8).to_bytes(4, "little")
    (tmp_path / "empty.wav").write_bytes(bytes(b))
    with pytest.raises(AudioLoadError, match="zero samples"):
        load_audio(tmp_path / "empty.wav")


def test_a_flac_cut_inside_its_first_frame_is_a_truncated_file_not_a_library_error(tmp_path):
    from evaluators.audio_io import AudioLoadError, load_audio

    sf.write(tmp_path / "whole.flac", speechlike(5.0), 16000, subtype="PCM_24")
    (tmp_path / "cut.flac").write_bytes((tmp_path / "whole.flac").read_bytes()[:200])  # header and a few bytes
    with pytest.raises(AudioLoadError, match="truncated: its header claims 80000 frames"):
        load_audio(tmp_path / "cut.flac")


@pytest.mark.parametrize("subtype,sr", [("VORBIS", 44100), ("OPUS", 48000)])
def test_an_ogg_file_cut_short_is_an_error_not_scored_on_what_is_left(tmp_path, subtype, sr):
    from evaluators.audio_io import AudioLoadError, TruncatedAudioWarning, load_audio

    sf.write(tmp_path / "whole.ogg", speechlike(5.0, sr=sr), sr, format="OGG", subtype=subtype)
    assert abs(len(load_audio(tmp_path / "whole.ogg")) - 80000) <= 1
    cut = tmp_path / "cut.ogg"
    cut.write_bytes((tmp_path / "whole.ogg").read_bytes()[: (tmp_path / "whole.ogg").stat().st_size // 2])
    with pytest.raises(AudioLoadError, match="Ogg file cut short"):
        load_audio(cut)
    with pytest.warns(TruncatedAudioWarning, match="Ogg file cut short"):
        assert 0 < len(load_audio(cut, allow_truncated=True)) < 80000


def test_a_wav_sox_wrote_to_a_pipe_is_read_whole_not_refused_as_cut(tmp_path):
    """sox writing a WAV of unknown length to a pipe leaves ``data`` at its placeholder
    0x7ffff000 bytes (18.6 hours at 16 kHz mono PCM16); the samples are all there."""
    from evaluators.audio_io import load_audio

    sf.write(tmp_path / "whole.wav", speechlike(1.0), 16000)
    b = bytearray((tmp_path / "whole.wav").read_bytes())
    i = b.find(b"data")
    b[4:8], b[i + 4:i + 8] = (0x7FFFF024).to_bytes(4, "little"), (0x7FFFF000).to_bytes(4, "little")
    (tmp_path / "piped.wav").write_bytes(bytes(b))
    np.testing.assert_array_equal(load_audio(tmp_path / "piped.wav"), load_audio(tmp_path / "whole.wav"))


@pytest.mark.skipif("MP3" not in sf.available_formats(), reason="libsndfile without MP3")
@pytest.mark.parametrize("sr", [44100])
def test_an_mp3_is_decoded_as_one_whole_read_decodes_it(tmp_path, sr):
    """libsndfile's MP3 decoder returns other samples after a read that stops inside a frame
    (a burst of error after every block boundary): the clip is read in one go."""
    from scipy.signal import resample_poly

    from evaluators.audio_io import LongClipWarning, load_audio

    p = tmp_path / "tts.mp3"
    t = np.arange(5 * sr) / sr
    noisy = 0.3 * np.random.default_rng(0).standard_normal(len(t)) * (np.sin(2 * np.pi * 2 * t) > 0)
    sf.write(p, noisy.astype(np.float32), sr)  # noise bursts: frames borrow from the bit reservoir
    whole, got_sr = sf.read(p, dtype="float32")
    want = resample_poly(whole.astype(np.float64), 16000 // np.gcd(16000, got_sr), got_sr // np.gcd(16000, got_sr))
    got = load_audio(p)
    assert len(got) == len(want) and np.abs(got - want).max() < 1e-5
    with pytest.warns(LongClipWarning):
        bounded = load_audio(p, max_seconds=4.0)  # a bounded read is a prefix of the same decode
    assert np.abs(bounded[:48000] - want[:48000]).max() < 1e-5
