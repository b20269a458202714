#!/bin/sh
# rq's container entry: on the first start, makes the volume an rq root; then rq-mgr in the foreground (rq-init).
set -eu
home=${APP_DIR:-/opt/rq}
root=${RQ_ROOT:-/srv/rq}
if [ ! -e "$root/config/config.json" ]; then
  # --addr 0.0.0.0: the port is published from the container's own interface; put basic_auth in
  # config/config.json (docs/security.md) before publishing it beyond this machine.
  "$home/bin/rq-install" --root "$root" --env "${INSTALL_ENV:-production}" \
    --addr "${LISTEN_ADDR:-0.0.0.0}" --port "${WEB_PORT:-3333}" --host "${PUBLIC_HOST:-127.0.0.1}"
fi
exec "$home/bin/rq-init" --root "$root" "$@"
