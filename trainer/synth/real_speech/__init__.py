"""Real speech for corpora: installed TTS engines, installed human recordings, known degradations.

Nothing here downloads: every engine and recording comes from a Debian or PyPI package installed on
the machine, and a missing one is reported with the single install command that provides it.
``recordings`` finds human recordings with their transcripts, ``engines`` renders text with TTS
voices, ``conditioning`` brings every clip to one channel (16 kHz mono float, telephone band,
trimmed, loudness-normalised), ``degrade`` applies degradations of known amount, ``ladder`` holds
the human-likeness ladder by construction.
"""
