/**
 * What a webhook trigger's sender needs, shown once with its secret: the URL on the hub
 * and a shell example that signs a delivery the Standard Webhooks way (HMAC-SHA256 of
 * `id.timestamp.body` with the secret's bytes, base64, as `v1,<signature>`).
 */

/** The trigger's URL: the hub's origin and the path the host answered. */
export function hookUrl(origin: string, path: string): string {
  return origin.replace(/\/+$/, '') + path;
}

/** A `sh` script that signs one delivery with `openssl` and posts it with `curl`. */
export function curlExample(url: string, secret: string): string {
  return [
    `SECRET='${secret}'`,
    `URL='${url}'`,
    `BODY='{"type":"test.ping"}'`,
    'ID="msg_$(date +%s%N)"; TS=$(date +%s)',
    `SIG=$(printf '%s.%s.%s' "$ID" "$TS" "$BODY" \\`,
    `  | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(printf '%s' "\${SECRET#whsec_}" | base64 -d | xxd -p -c 256)" -binary \\`,
    '  | base64)',
    `curl -sS "$URL" -H 'content-type: application/json' -H "webhook-id: $ID" \\`,
    `  -H "webhook-timestamp: $TS" -H "webhook-signature: v1,$SIG" -d "$BODY"`,
  ].join('\n');
}

/** Event types typed as a comma-separated list: trimmed, empty ones dropped. */
export function eventTypesFrom(text: string): string[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
