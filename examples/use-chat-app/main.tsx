import { createRoot } from 'react-dom/client';
import { ChatPage } from './chat';

// serve.js gives the page Switchyard's origin and a session token; the chat id is the page's.
const backend = (await (await fetch('/session')).json()) as { api: string; token: string };
const chatId = new URLSearchParams(location.search).get('chat') ?? crypto.randomUUID();
createRoot(document.getElementById('root')!).render(<ChatPage chatId={chatId} backend={backend} />);
