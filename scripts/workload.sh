# Sourced by the scripts that run every example: `workload OBJ DIR PACKETS [gen options]` writes the example's trace
# (and map/route preloads) with `hwxdp gen` into DIR and sets the array `extra` to the options that hand them, and
# the arrival interface the example needs, to run/verify/bench.
workload() {
  local obj=$1 dir=$2 packets=$3
  shift 3
  "$hwxdp" gen "$obj" -o "$dir" -n "$packets" "$@" > /dev/null
  extra=(--pcap "$dir/trace.pcap")
  [ -f "$dir/maps.json" ] && extra+=(--maps "$dir/maps.json")
  [ -f "$dir/routes.json" ] && extra+=(--routes "$dir/routes.json")
  [ "$(basename "$obj" .o)" = rxq_counter ] && extra+=(--ifindex 5 --rx-queues 128)
  return 0
}
