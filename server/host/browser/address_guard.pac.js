// Crewhost's browser address policy, as a proxy auto-config (PAC) script: Chromium asks
// it about the host of every request (navigations, each redirect hop, subresources,
// workers, WebSockets) before it connects. A refused address goes to the host's refusal
// listener for its rule instead; everything else goes through the host's filtering proxy
// (POLICY.connect), which judges the address it dials: this script's lookup is not the
// connection's. POLICY is filled in from the host's settings when Chromium starts (see
// address_guard.py): its rows are the Python policy's own (server/common/browser_address_policy.py), in
// order; the first that holds an address decides, and a row without a listener lets it
// through (to the filtering proxy).
var POLICY = /*POLICY*/ null;

function isAddress(host) {
  return host.indexOf(':') >= 0 || /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host);
}

function listenerFor(address) {
  for (var i = 0; i < POLICY.rows.length; i++) {
    if (isInNetEx(address, POLICY.rows[i][0])) return POLICY.rows[i][1];
  }
  return null;
}

function FindProxyForURL(url, host) {
  var name = host.toLowerCase().replace(/^\[/, '').replace(/\]$/, '').replace(/\.$/, '');
  var addresses, i, listener;
  if (isAddress(name)) {
    addresses = [name];
  } else {
    if (POLICY.names.indexOf(name) >= 0) return POLICY.connect;
    if (name === 'localhost' || /\.localhost$/.test(name)) return 'PROXY ' + POLICY.localhost;
    // Chromium's own resolver; every address counts. A name can answer otherwise when
    // asked again, which is why the filtering proxy judges the address it dials.
    addresses = (dnsResolveEx(name) || '').split(';');
  }
  for (i = 0; i < addresses.length; i++) {
    listener = addresses[i] ? listenerFor(addresses[i]) : null;
    if (listener) return 'PROXY ' + listener;
  }
  return POLICY.connect;
}
