#!/usr/bin/env bash
# The Debian packages that give omnijudge real ears offline: real recordings with transcripts (Asterisk
# prompts by several professional speakers, LibriVox and an4 readings from pocketsphinx-testdata, the
# alsa-utils channel names) and real TTS engines (espeak-ng, festival diphone and HTS voices, flite),
# plus sox. The real-audio corpora and the tests read them from /usr/share; nothing is committed.
# Run as root (or with sudo); on a machine without apt-get it says so and stops.
set -euo pipefail
packages=(
  asterisk-core-sounds-en-wav asterisk-core-sounds-en asterisk-core-sounds-es-wav asterisk-core-sounds-es
  asterisk-core-sounds-fr-wav asterisk-core-sounds-fr asterisk-core-sounds-it-wav asterisk-core-sounds-it
  asterisk-core-sounds-ru-wav asterisk-core-sounds-ru asterisk-prompt-it-menardi-wav alsa-utils
  pocketsphinx-testdata espeak-ng festival festvox-kallpc16k festvox-kdlpc16k flite festvox-us-slt-hts sox
)
if ! command -v apt-get >/dev/null; then
  echo "no apt-get here: install the Debian packages ${packages[*]} (or their equivalents) by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}"
