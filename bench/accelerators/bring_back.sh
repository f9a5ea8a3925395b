#!/usr/bin/env bash
# A run folder into the device machine's $OUT as one archive, OUT/NAME.tar.gz, without model files
# (.pt2, .pt, .model, .ckpt): a call brings back only a few files, so a folder of logs copied file by
# file came back cut (one H100 call returned 8 of its 21 files and named the rest "count").
#   bench/accelerators/bring_back.sh FOLDER NAME        nothing where OUT is unset
set -uo pipefail
[ -n "${OUT:-}" ] || exit 0
folder=$1 name=$2
[ -d "$folder" ] || { echo "bring_back: no folder $folder" >&2; exit 1; }
mkdir -p "$OUT"
tar czf "$OUT/$name.tar.gz" -C "$folder" --exclude='*.pt2' --exclude='*.pt' --exclude='*.model' --exclude='*.ckpt' . &&
  echo "bring_back: $folder -> OUT/$name.tar.gz ($(du -h "$OUT/$name.tar.gz" | cut -f1))" >&2
