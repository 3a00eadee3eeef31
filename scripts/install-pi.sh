#!/usr/bin/env bash
# Installs (or updates) edgeld on a Raspberry Pi from a built checkout: the edgeld user, /opt/edgeld
# with production dependencies, /etc/edgeld/edgeld.env, and the systemd unit. Safe to run again.
#
# Usage, from the checkout:   npm ci && npm run build && sudo scripts/install-pi.sh [--no-start] [--dry-run]
# --dry-run prints each step and command without changing anything, and needs no root.

set -euo pipefail

APP_DIR=/opt/edgeld
CONF_DIR=/etc/edgeld
ENV_FILE=$CONF_DIR/edgeld.env
UNIT=edgeld.service
UNIT_FILE=/etc/systemd/system/$UNIT
DROPIN_DIR=/etc/systemd/system/$UNIT.d
SERVICE_USER=edgeld
MIN_NODE_MAJOR=20

start=yes
dry_run=no
for arg in "$@"; do
  case "$arg" in
    --no-start) start=no ;;
    --dry-run) dry_run=yes ;;
    -h | --help)
      sed -n '2,6p' "$0"
      exit 0
      ;;
    *)
      echo "unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

say() { printf 'install-pi: %s\n' "$*"; }
die() {
  printf 'install-pi: %s\n' "$*" >&2
  exit 1
}

# Runs a command that changes the system, or only prints it with --dry-run.
run() {
  if [[ $dry_run == yes ]]; then
    printf 'install-pi: would run: %s\n' "$*"
  else
    "$@"
  fi
}

[[ $dry_run == yes || $(id -u) -eq 0 ]] || die "must run as root (sudo $0)"

SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -f $SRC_DIR/dist/main.js ]] || die "$SRC_DIR/dist/main.js missing: run 'npm ci && npm run build' as your user first"
[[ -f $SRC_DIR/package-lock.json ]] || die "$SRC_DIR/package-lock.json missing"

NODE_BIN=$(command -v node) || die "node not found; install Node.js $MIN_NODE_MAJOR or later"
NPM_BIN=$(command -v npm) || die "npm not found"
node_major=$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')
((node_major >= MIN_NODE_MAJOR)) || die "Node.js $MIN_NODE_MAJOR or later required, found $("$NODE_BIN" --version)"
[[ $dry_run == yes ]] || command -v systemctl >/dev/null || die "systemctl not found"

# 1. Service user: a system account without a login shell; its home is the state directory.
if ! getent passwd "$SERVICE_USER" >/dev/null; then
  [[ $dry_run == yes ]] || say "creating system user $SERVICE_USER"
  run useradd --system --user-group --home-dir /var/lib/edgeld --no-create-home \
    --shell /usr/sbin/nologin "$SERVICE_USER"
fi

# 2. Application tree: build a complete copy next to the old one, then swap, so a failed install
#    leaves the running version untouched.
if [[ $dry_run == yes ]]; then
  say "would copy dist/, package.json, package-lock.json, contexts/, README.md, docs/ and scripts/{backup,restore,idp,make-certs}.mjs to a staging directory next to $APP_DIR"
  say "would install production dependencies there (npm ci --omit=dev), unless $APP_DIR/node_modules matches the lockfile and Node version"
  say "would replace $APP_DIR with the staging directory (root-owned, read-only to $SERVICE_USER)"
else
staging=$(mktemp -d "$APP_DIR.new.XXXXXX")
trap 'rm -rf "$staging"' EXIT
say "copying the built tree to $staging"
cp -R "$SRC_DIR/dist" "$staging/dist"
cp "$SRC_DIR/package.json" "$SRC_DIR/package-lock.json" "$staging/"
for optional in contexts README.md docs LICENSE; do
  if [[ -e $SRC_DIR/$optional ]]; then cp -R "$SRC_DIR/$optional" "$staging/"; fi
done
mkdir -p "$staging/scripts"
cp "$SRC_DIR/scripts/backup.mjs" "$SRC_DIR/scripts/restore.mjs" "$SRC_DIR/scripts/idp.mjs" "$SRC_DIR/scripts/make-certs.mjs" "$staging/scripts/"
"$NODE_BIN" --version >"$staging/.node-version"

# Reuse the installed dependencies when the lockfile and Node version are unchanged: building
# better-sqlite3 from source on a Pi takes minutes.
if [[ -d $APP_DIR/node_modules ]] &&
  cmp -s "$APP_DIR/package-lock.json" "$staging/package-lock.json" &&
  cmp -s "$APP_DIR/.node-version" "$staging/.node-version"; then
  say "dependencies unchanged; reusing $APP_DIR/node_modules"
  cp -R "$APP_DIR/node_modules" "$staging/node_modules"
else
  say "installing production dependencies (npm ci --omit=dev)"
  (cd "$staging" && "$NPM_BIN" ci --omit=dev --no-audit --no-fund --loglevel=error)
fi
chown -R root:root "$staging"
chmod -R u=rwX,go=rX "$staging"

if [[ -d $APP_DIR ]]; then
  rm -rf "$APP_DIR.old"
  mv "$APP_DIR" "$APP_DIR.old"
fi
mv "$staging" "$APP_DIR"
trap - EXIT
rm -rf "$APP_DIR.old"
say "installed $APP_DIR"
fi

# 3. Configuration: the env file is created once and never overwritten.
run install -d -m 0750 -o root -g "$SERVICE_USER" "$CONF_DIR"
if [[ ! -e $ENV_FILE && $dry_run == yes ]]; then
  say "would write $ENV_FILE: every option, commented out, with its default"
elif [[ ! -e $ENV_FILE ]]; then
  say "writing $ENV_FILE"
  tmp_env=$(mktemp)
  {
    echo "# edgeld options as environment variables; uncomment to change a default."
    echo "# Option names: dotted name upper-cased, '.' and '-' become '_'."
    echo "# EDGELD_CONFIG=$CONF_DIR/config.json names a JSON config file; variables here win over it."
    echo
    "$NODE_BIN" --input-type=module -e "
      const { CONFIG_OPTIONS } = await import('$APP_DIR/dist/config/index.js');
      for (const o of CONFIG_OPTIONS) {
        const value = o.env === 'STORAGE_DIR' ? '/var/lib/edgeld' : String(o.default);
        console.log('# ' + o.description + '\n#' + o.env + '=' + value + '\n');
      }
    "
  } >"$tmp_env"
  install -m 0640 -o root -g "$SERVICE_USER" "$tmp_env" "$ENV_FILE"
  rm -f "$tmp_env"
else
  say "keeping existing $ENV_FILE"
fi

# 4. The unit, plus a drop-in when node is not /usr/bin/node (nvm, /usr/local).
run install -m 0644 "$SRC_DIR/systemd/$UNIT" "$UNIT_FILE"
if [[ $NODE_BIN != /usr/bin/node ]]; then
  run install -d -m 0755 "$DROPIN_DIR"
  NODE_FLAGS=$("$NODE_BIN" -p "require('$SRC_DIR/package.json').config.nodeFlags")
  if [[ $dry_run == yes ]]; then
    say "would write $DROPIN_DIR/node-path.conf: ExecStart=$NODE_BIN $NODE_FLAGS $APP_DIR/dist/main.js"
  else
    printf '[Service]\nExecStart=\nExecStart=%s %s %s/dist/main.js\n' "$NODE_BIN" "$NODE_FLAGS" "$APP_DIR" >"$DROPIN_DIR/node-path.conf"
    say "node is $NODE_BIN; wrote $DROPIN_DIR/node-path.conf"
  fi
elif [[ -e $DROPIN_DIR/node-path.conf ]]; then
  run rm -f "$DROPIN_DIR/node-path.conf"
fi
run systemctl daemon-reload
run systemctl enable "$UNIT"
if [[ $dry_run == yes ]]; then
  [[ $start == yes ]] && say "would run: systemctl restart $UNIT"
  exit 0
fi
say "enabled $UNIT"

if [[ $start == yes ]]; then
  systemctl restart "$UNIT"
  say "started $UNIT; status: systemctl status $UNIT; logs: journalctl -u $UNIT -f"
else
  say "not started (--no-start); start with: systemctl start $UNIT"
fi
