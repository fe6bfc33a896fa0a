# Sourced by the reporting scripts: a host run's model-run files as `ftax validate --measured`
# arguments, one per line. FILE.json is used as it is; FILE.json.xz (older host runs keep
# theirs compressed) is unpacked into $out/unpacked first; a file the run does not have is left
# out. Needs $out (a scratch folder).
#   mapfile -t m < <(measured "$run/torchscript-cudagraph.json" "$run/eager.json")
measured() {
  local f args=()
  for f in "$@"; do
    if [ -f "$f" ]; then args+=(--measured "$f")
    elif [ -f "$f.xz" ]; then
      local tmp="$out/unpacked/${f//\//_}"; mkdir -p "$out/unpacked"; xz -dc "$f.xz" > "$tmp"; args+=(--measured "$tmp")
    fi
  done
  printf '%s\n' "${args[@]}"
}
