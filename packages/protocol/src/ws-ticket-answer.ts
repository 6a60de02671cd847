import * as z from 'zod/mini';

/** `POST /v1/ws-tickets`: what the client opens the websocket with (browsers cannot set its headers). */
export const wsTicketSchema = z
  .object({ ticket: z.string(), expiresInSeconds: z.int().check(z.positive()) })
  .check(z.meta({ id: 'WsTicket', description: 'A single-use ticket for `GET /v1/ws?ticket=…`.' }));
export type WsTicket = z.infer<typeof wsTicketSchema>;
