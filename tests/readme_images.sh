#!/bin/sh
# Every image a README shows (README.md, */README.md and the GPU pages results/*/README.md,
# Markdown ![..](path) or <img src>) must exist; one under results/figures/ must also be named by
# a figure script (plots/ or run.sh), so that the main job regenerates it: a figure drawn per GPU
# page, NAME-<gpu>.png for a folder results/<gpu>, counts as named where "NAME-" is.
# Usage: readme_images.sh REPO_ROOT. Prints each failure.
root=${1:?usage: readme_images.sh REPO_ROOT}
cd "$root" || exit 2
fail=0
for readme in README.md */README.md results/*/README.md; do
    [ -e "$readme" ] || continue
    dir=$(dirname "$readme")
    refs=$(grep -oE '!\[[^]]*\]\([^) ]+|<img [^>]*src="[^"]+' "$readme" | sed -E 's/.*[(]//; s/.*src="//')
    for ref in $refs; do
        case $ref in http://* | https://*) continue ;; esac
        path=$(realpath -m --relative-to=. "$dir/$ref")
        if [ ! -e "$path" ]; then
            echo "$readme: $ref: no such file ($path)"
            fail=1
        fi
        case $path in
        results/figures/*)
            name=$(basename "$path")
            stem=$name
            for gpu in results/*/; do
                gpu=$(basename "$gpu")
                case $name in *-"$gpu".png) stem=${name%"$gpu".png} ;; esac
            done
            if ! grep -rqF "$stem" plots run.sh; then
                echo "$readme: $ref: no figure script under plots/ or run.sh names $name"
                fail=1
            fi
            ;;
        esac
    done
done
[ $fail -eq 0 ] && echo "every README image exists and every results/figures/ one has a generator"
exit $fail
