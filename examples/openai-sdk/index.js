// OpenAI's SDK against Switchyard: only baseURL and the key change. Each call is a durable turn
// of a Switchyard conversation, so a worker that dies mid-answer does not lose it.
import OpenAI from 'openai';

const url = process.env.SWITCHYARD_URL ?? 'http://127.0.0.1:3000';
const client = new OpenAI({ baseURL: `${url}/openai/v1`, apiKey: process.env.SWITCHYARD_API_KEY });
const question = process.argv[2] ?? 'Say hello in five words.';

// Chat Completions, streamed: the text as it comes.
const stream = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: question }], stream: true });
process.stdout.write('chat.completions: ');
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
process.stdout.write('\n');

// Responses, then a follow-up that continues the same conversation by previous_response_id.
const first = await client.responses.create({ model: 'scripted', input: question });
console.log(`responses: ${first.output_text}`);
const followUp = await client.responses.create({ model: 'scripted', input: 'And once more.', previous_response_id: first.id });
console.log(`follow-up (${followUp.previous_response_id === first.id ? 'same conversation' : 'new conversation'}): ${followUp.output_text}`);
