#!/bin/bash
# Runs inside the VM (root, real kernel Bluetooth). Bumble controllers serve the kernel's hci0 and
# hci1 through /dev/vhci; a Bumble peripheral advertises on the same virtual link. BlueZ's tools
# make the kernel scan, connect, discover, read, subscribe, pair and disconnect on hci0 (and scan
# on hci1) while btmon and several blesniff captures record the monitor channel. This script
# records; check.py (on the host, after the VM is off) judges. Lines starting "== " reach the
# console summary.
cd "$WORK"; rm -rf out; mkdir -p out
# nobody cannot create files on the 9p share: its capture writes to the guest's tmpfs.
PRIV=/run/blesniff-nobody; mkdir -p $PRIV; chmod 777 $PRIV
PY=${BUMBLE_PYTHON:-python3}
B=$BLESNIFF; P=F0:F1:F2:F3:F4:F5
log() { echo "== $*"; }

# Adapter list with no adapter, then with two (two vhci controllers).
"$B" capture --list > out/list0.txt 2>&1; echo "rc=$?" >> out/list0.txt
# A capture of an adapter that does not exist yet waits for it (as a USB dongle plugged in later).
"$B" capture -q --interface hci1 -w out/wait.pcap 2> out/wait.err & W=$!
"$PY" "$VMLIVE/peripheral.py" 400 2 > out/peripheral.txt 2>&1 &
for i in $(seq 150); do grep -q advertising out/peripheral.txt 2>/dev/null && break; sleep 1; done
log "peripheral up after ${i}s"
"$B" capture --list > out/list2.txt 2>&1; echo "rc=$?" >> out/list2.txt
sed 's/^/== list: /' out/list2.txt

# The recorders. btmon is the reference; blesniff writes pcap, btsnoop (auditing live), only
# hci1, a capture stopped by SIGINT mid-session, a rotating set, and one running as nobody.
btmon -w out/btmon.btsnoop > /dev/null 2>&1 & M=$!
"$B" capture -q -w out/live.pcap 2> out/live.pcap.err & A=$!
"$B" capture -q --audit --fail-on never -w out/live.btsnoop 2> out/live.btsnoop.err & S=$!
"$B" capture -q --interface hci1 -w out/hci1.pcap 2> out/hci1.err & H=$!
"$B" capture -q -w out/sigint.btsnoop 2> out/sigint.err & I=$!
"$B" capture -q --file-size 0.003 --files 3 -w out/rot.pcap 2> out/rot.err & R=$!
"$B" capture -q --user nobody -w $PRIV/priv.pcap 2> out/priv.err & N=$!
# A recorder creates its file once the monitor socket is open (and privileges dropped); then the
# kernel's replay at open is behind it. Nothing happens on the adapters until all are open.
for i in $(seq 120); do
  n=0; for f in out/btmon.btsnoop out/live.pcap out/live.btsnoop out/hci1.pcap out/sigint.btsnoop out/rot.pcap $PRIV/priv.pcap; do [ -e $f ] && n=$((n+1)); done
  [ $n = 7 ] && break; sleep 0.5
done
log "recorders open after $((i / 2))s"
sleep 2
grep -E '^(Uid|Gid|CapEff|CapPrm):' /proc/$N/status > out/priv.status

bt() { timeout "$1" "${@:2}" 2>&1; }
btmgmt --index 0 le on >/dev/null 2>&1; btmgmt --index 0 bondable on >/dev/null 2>&1
# LE Secure Connections (the peripheral offers it too): pairing with public keys and DHKey checks.
btmgmt --index 0 io-cap 3 >/dev/null 2>&1; btmgmt --index 0 sc on >/dev/null 2>&1
btmgmt --index 0 power on > out/power.txt 2>&1
hciconfig hci1 up
log "scan with duplicates"
timeout -s INT 5 hcitool -i hci0 lescan --duplicates > out/lescan.txt 2>&1
timeout -s INT 4 hcitool -i hci1 lescan > out/lescan1.txt 2>&1
kill -INT $I   # mid-session: the file must still be complete
# Without privileges (nobody, no capabilities) the monitor socket cannot open: --list falls back
# to an ordinary HCI socket (HCIGETDEVLIST); capturing still fails. Both adapters are up now.
cp "$B" $PRIV/blesniff; chmod 755 $PRIV/blesniff
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
$NOBODY $PRIV/blesniff capture --list > out/list-nobody.txt 2> out/list-nobody.err; echo "rc=$?" >> out/list-nobody.txt
$NOBODY $PRIV/blesniff capture -q -w $PRIV/denied.pcap > out/capture-nobody.txt 2>&1; echo "rc=$?" >> out/capture-nobody.txt
sed 's/^/== unprivileged list: /' out/list-nobody.txt out/list-nobody.err
log "SMP pairing"
# Linux asks user space to confirm every Just Works pairing (a User Confirmation Request, hint 1),
# and btmgmt answers prompts only in its interactive shell: feed it the command, "yes" once the
# request shows, and "quit" once the pairing is over.
: > out/pair.txt
{ echo "pair -c 3 -t 2 $P"
  for i in $(seq 80); do grep -q "User Confirm" out/pair.txt && break; sleep 0.5; done
  echo yes
  for i in $(seq 80); do grep -qE "Paired with|failed" out/pair.txt && break; sleep 0.5; done
  echo quit
} | timeout 60 stdbuf -oL btmgmt --index 0 > out/pair.txt 2>&1
sleep 1
bt 10 btmgmt --index 0 disconnect -t 2 $P > out/disconnect.txt
sleep 2
log "GATT: primary services, characteristics, descriptors, read"
bt 40 gatttool -i hci0 -b $P -t random --primary > out/primary.txt
bt 40 gatttool -i hci0 -b $P -t random --characteristics > out/chars.txt
bt 40 gatttool -i hci0 -b $P -t random --char-desc > out/desc.txt
bt 40 gatttool -i hci0 -b $P -t random --char-read --uuid=2a19 > out/read.txt
CCCD=$(awk '/uuid = 00002a19/{f=1} f && /uuid = 00002902/{sub(",", "", $3); print $3; exit}' out/desc.txt)
log "notifications through CCCD ${CCCD:-?}"
bt 12 gatttool -i hci0 -b $P -t random --char-write-req -a "${CCCD:-0x0000}" -n 0100 --listen > out/notify.txt
bt 10 btmgmt --index 0 disconnect -t 2 $P > out/disconnect2.txt
sleep 3
for f in primary chars read notify; do head -3 out/$f.txt | sed "s/^/== $f: /"; done
grep -aoE "(Paired with|Pairing with .*failed|User Confirm ).*" out/pair.txt | sed 's/^/== pair: /'
kill -INT $M $A $S $H $R $N $W
for p in $M $A $S $H $I $R $N $W; do wait $p; echo "$p rc=$?"; done > out/exits.txt
cp $PRIV/priv.pcap out/priv.pcap
"$B" audit out/live.btsnoop --fail-on never > out/offline-audit.txt 2>&1
dmesg > out/dmesg.txt 2>&1
log "recorded: $(ls out | tr '\n' ' ')"
