#!/usr/bin/env bash
# The steps of examples/github-actions/memory.yml, one command each, so that the workflow
# stays a few lines and the steps run the same anywhere (another CI system, a laptop, and
# this project's .ci/run, which runs them against one of its scenarios).
#
#   informer-mem-ci.sh shard SCENARIO I/N DIR
#       Run shard I of N of SCENARIO; its report goes to DIR/shard-I-of-N.json.
#   informer-mem-ci.sh gate SCENARIO DIR BASELINE
#       Merge the shard reports in DIR into DIR/head.json, write the markdown diff against
#       BASELINE to DIR/comment.md and the gate's verdict to DIR/junit.xml, and exit as
#       `check` does: 0 within tolerance, 1 on a regression, 2 if the reports cannot be
#       compared. BASELINE is a file, or a git object such as origin/main:reports/NAME.json
#       (the base branch's report); when that commit has no such file (a scenario new in
#       the pull request), the comment says so and the gate passes.
#   informer-mem-ci.sh comment SCENARIO FILE
#       Post FILE as the pull request's comment for SCENARIO, or update the one an earlier
#       run posted (found by a hidden first line naming the scenario), with the GitHub CLI:
#       GITHUB_REPOSITORY and PR_NUMBER name the pull request, GH_TOKEN authorizes.
#
# INFORMER_MEM names the binary (default: informer-mem on PATH); RUN_ARGS adds options
# to `run` (for a scenario with programs, `--allow-commands`, after reviewing them).
set -euo pipefail

informer_mem=${INFORMER_MEM:-informer-mem}

usage() {
    sed -n '6,21p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

# The scenario's name, as `run` names its report: the file name without `.toml`.
scenario_name() {
    basename "$1" .toml
}

shard() {
    local scenario=$1 shard=$2 dir=$3
    [[ $shard =~ ^[0-9]+/[0-9]+$ ]] || { echo "error: shard '$shard' is not I/N" >&2; exit 2; }
    mkdir -p "$dir"
    # shellcheck disable=SC2086 # RUN_ARGS is a list of options
    "$informer_mem" run "$scenario" --shard "$shard" --quiet ${RUN_ARGS:-} \
        --out "$dir/shard-${shard%/*}-of-${shard#*/}.json"
}

gate() {
    local scenario=$1 dir=$2 baseline=$3 name
    name=$(scenario_name "$scenario")
    local shards=("$dir"/shard-*-of-*.json)
    [[ -e ${shards[0]} ]] || { echo "error: no shard reports (shard-I-of-N.json) in $dir" >&2; exit 2; }
    "$informer_mem" merge "${shards[@]}" --out "$dir/head.json"
    if [[ ! -f $baseline ]]; then
        # Not a file: a git object, REF:PATH. A ref that does not resolve is an error; a
        # path its commit does not hold is a scenario new in this pull request.
        local ref=${baseline%%:*}
        if [[ $baseline != *:* ]] || ! git rev-parse --quiet --verify "$ref^{commit}" >/dev/null; then
            echo "error: baseline '$baseline' is neither a file nor REF:PATH of a commit here" >&2
            exit 2
        fi
        if ! git cat-file -e "$baseline" 2>/dev/null; then
            printf '### %s: no baseline\n\n`%s` does not exist: this is the first run. Commit its report (`informer-mem run %s --out %s`) to gate the next change on it.\n' \
                "$name" "$baseline" "$scenario" "${baseline#*:}" >"$dir/comment.md"
            echo "no baseline at $baseline: nothing to gate" >&2
            return 0
        fi
        git show "$baseline" >"$dir/base.json"
        baseline=$dir/base.json
    fi
    "$informer_mem" diff "$baseline" "$dir/head.json" --format markdown >"$dir/comment.md"
    "$informer_mem" check "$dir/head.json" --baseline "$baseline" --junit "$dir/junit.xml"
}

comment() {
    local scenario=$1 file=$2 marker id
    : "${GITHUB_REPOSITORY:?names the repository, owner/name}" "${PR_NUMBER:?names the pull request}"
    # One comment per scenario: its first line names it, so a workflow that gates several
    # scenarios keeps one comment for each, each updated in place.
    marker="<!-- informer-mem-ci: $(scenario_name "$scenario") -->"
    { printf '%s\n' "$marker"; cat "$file"; } >"$file.body"
    id=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" \
        --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
    if [[ -n $id ]]; then
        gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$file.body" >/dev/null
        echo "updated comment $id"
    else
        gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$file.body" >/dev/null
        echo "posted a comment"
    fi
}

case ${1:-} in
    shard) [[ $# -eq 4 ]] || usage; shard "$2" "$3" "$4" ;;
    gate) [[ $# -eq 4 ]] || usage; gate "$2" "$3" "$4" ;;
    comment) [[ $# -eq 3 ]] || usage; comment "$2" "$3" ;;
    *) usage ;;
esac
