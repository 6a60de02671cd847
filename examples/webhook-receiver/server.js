// Receives Switchyard's webhooks and verifies each signature (Standard Webhooks) before trusting
// it. Delivery is at least once: the same event may come again, with the same webhook-id.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.SWITCHYARD_WEBHOOK_SECRET;
if (!secret) throw new Error('set SWITCHYARD_WEBHOOK_SECRET to the whsec_… secret the webhook was created with');
const webhook = new Webhook(secret);
const seen = new Set();

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const header = (name) => String(req.headers[name] ?? '');
  let event;
  try {
    event = webhook.verify(Buffer.concat(chunks).toString('utf8'), {
      'webhook-id': header('webhook-id'),
      'webhook-timestamp': header('webhook-timestamp'),
      'webhook-signature': header('webhook-signature'),
    });
  } catch {
    console.log('refused: not signed with this secret, or too old');
    return void res.writeHead(400).end();
  }
  // Answer 2xx quickly; an event already handled is acknowledged again, not handled twice.
  if (!seen.has(event.id)) {
    seen.add(event.id);
    console.log(`verified ${event.type} ${JSON.stringify(event.data)}`);
  }
  res.writeHead(204).end();
});

server.listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/`));
