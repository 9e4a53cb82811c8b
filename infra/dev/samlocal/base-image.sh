#!/usr/bin/env bash
# Builds the base image `sam local` runs Prickle's functions on, offline:
# a rootfs holding Debian's busybox-static (the shell, mv and chmod the SAM
# CLI's emulation image needs; the functions are static Go binaries and the
# SAM CLI mounts its own aws-lambda-rie), `docker import`ed and tagged
#   public.ecr.aws/lambda/provided:al2023-x86_64  (the tag SAM CLI 1.170 asks for: provided.al2023 is multi-arch)
#   public.ecr.aws/lambda/provided:al2023
# Never pulled. With a registry in reach, `docker pull public.ecr.aws/lambda/provided:al2023-x86_64`
# gives the real image instead (then leave out --skip-pull-image, or keep it: either works).
# Needs docker (a running dockerd) and /usr/bin/busybox (apt-get install docker.io busybox-static).
set -euo pipefail
repo=public.ecr.aws/lambda/provided
tags=(al2023-x86_64 al2023)
busybox=${BUSYBOX:-/usr/bin/busybox}

if [ "${1:-}" != "--force" ] && docker image inspect "$repo:${tags[0]}" >/dev/null 2>&1 \
  && docker image inspect "$repo:${tags[1]}" >/dev/null 2>&1; then
  echo "base image: $repo:${tags[0]} already present (--force rebuilds it)"
  exit 0
fi
if ! "$busybox" --list >/dev/null 2>&1; then
  echo "base image: $busybox does not run; apt-get install busybox-static" >&2
  exit 1
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,usr/bin,sbin,usr/sbin,tmp,var/task,var/runtime,opt,etc}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
# One link per applet busybox has (sh, mv, chmod, ls, cat, ...).
for applet in $("$busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
  --change 'ENV LAMBDA_TASK_ROOT=/var/task' \
  --change 'ENV LAMBDA_RUNTIME_DIR=/var/runtime' \
  --change 'WORKDIR /var/task' \
  - "$repo:${tags[0]}" >/dev/null
docker tag "$repo:${tags[0]}" "$repo:${tags[1]}"
echo "base image: $repo:${tags[0]} and :${tags[1]} built from $busybox ($(docker image inspect -f '{{.Size}}' "$repo:${tags[0]}") bytes)"
