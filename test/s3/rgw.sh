#!/usr/bin/env bash
# The tests' S3 server: a throwaway single-node Ceph (one mon, one memstore OSD,
# one rgw for S3 and one for static-website mode) on 127.0.0.1, kept in DIR.
#   rgw.sh start DIR S3_PORT WEB_PORT MON_PORT   prints S3_ENDPOINT=... S3_WEBSITE_ENDPOINT=...
#   rgw.sh stop DIR                              stops exactly what start started, by pid file
# rgw stores and returns x-terraform-get (rgw extended http attrs), so a bucket's
# website endpoint can answer Terraform's download request by itself.
# Each setting below avoids a hang or a stray file seen without it: crc client mode
# with auth off, osd/0 made before mkfs, logs and sockets kept in DIR, no msgr1,
# no lifecycle threads (they stall shutdown), rgw stopped before the OSD.
set -euo pipefail
stop() {
  local dir; dir=$(cd "$1" 2>/dev/null && pwd) || return 0
  for g in client osd mon; do
    local pids=() alive=()
    for f in "$dir"/run/$g.*.pid; do   # only if it is still our daemon: its command line names our ceph.conf
      [ -s "$f" ] && p=$(cat "$f") && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "-c $dir/ceph.conf" && kill -TERM "$p" && pids+=("$p")
      rm -f "$f"
    done
    for _ in $(seq 100); do alive=(); for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done; [ ${#alive[@]} = 0 ] && break; sleep 0.1; done
    if [ ${#alive[@]} != 0 ]; then kill -KILL "${alive[@]}"; fi
  done
}
start() {
  local dir port=$2 web=$3 mon=$4 ak=${S3_ACCESS_KEY:-testaccesskey} sk=${S3_SECRET_KEY:-testsecretkey}
  dir=$(mkdir -p "$1" && cd "$1" && pwd); local c=$dir/ceph.conf
  [ -e "$c" ] && { echo "rgw.sh: $dir already holds a cluster" >&2; exit 1; }
  trap 'echo "rgw.sh: start failed, see $dir/log" >&2; stop "$dir"' ERR
  mkdir -p "$dir"/{mon,osd/0,run,log}
  cat > "$c" <<CONF
[global]
fsid = $(uuidgen)
mon host = v2:127.0.0.1:$mon
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
auth supported = none
ms mon client mode = crc
crash dir = $dir/log
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
mon cluster log file = default=$dir/log/cluster.\$channel.log cluster=$dir/log/cluster.log
mon data = $dir/mon/\$id
paxos propose interval = 0.1
osd data = $dir/osd/\$id
osd objectstore = memstore
memstore device bytes = 4294967296
osd pool default size = 1
osd pool default pg num = 8
rgw enable static website = true
rgw enable lc threads = false
rgw extended http attrs = x-terraform-get
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$port
[client.rgw.web]
rgw frontends = beast endpoint=127.0.0.1:$web
rgw enable apis = s3website, s3
CONF
  retry() { for _ in $(seq 120); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done; return 1; }
  monmaptool --create --addv a "[v2:127.0.0.1:$mon]" --fsid "$(awk '/^fsid/{print $3}' "$c")" "$dir/monmap" >/dev/null
  ceph-mon -c "$c" -i a --mkfs --monmap "$dir/monmap" && ceph-mon -c "$c" -i a
  local u; u=$(uuidgen); ceph -c "$c" --connect-timeout 30 osd new "$u" >/dev/null
  ceph-osd -c "$c" -i 0 --mkfs --osd-uuid "$u" 2>>"$dir/log/osd.0.stderr" && ceph-osd -c "$c" -i 0 2>>"$dir/log/osd.0.stderr"
  retry bash -c "ceph -c '$c' osd stat -f json | grep -q '\"num_up_osds\":1'"
  radosgw-admin -c "$c" user create --uid=test --display-name=test --access-key="$ak" --secret-key="$sk" >/dev/null
  radosgw -c "$c" -n client.rgw.a; radosgw -c "$c" -n client.rgw.web
  retry curl -fsS --aws-sigv4 aws:amz:us-east-1:s3 -u "$ak:$sk" "http://127.0.0.1:$port/" \
    -H 'x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
  kill -0 "$(cat "$dir/run/client.rgw.a.pid")"   # our rgw, not something else on the port, answered
  echo "S3_ENDPOINT=http://127.0.0.1:$port S3_WEBSITE_ENDPOINT=http://127.0.0.1:$web S3_ACCESS_KEY=$ak S3_SECRET_KEY=$sk"
}
case "${1:-}" in
  start) [ $# = 5 ] || { echo "usage: rgw.sh start DIR S3_PORT WEB_PORT MON_PORT" >&2; exit 2; }; start "$2" "$3" "$4" "$5" ;;
  stop) [ $# = 2 ] || { echo "usage: rgw.sh stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: rgw.sh start DIR S3_PORT WEB_PORT MON_PORT | rgw.sh stop DIR" >&2; exit 2 ;;
esac
