import type { RequestHandler } from 'express';
import type { RedisClient } from '../redis/redis-connection';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors/app-error';
import { userIdOf } from './require-user';

export interface UserRateLimiter {
  consume(userId: string): Promise<unknown>;
}

/**
 * Requests per user per minute, counted in Redis so that every API process shares the count.
 * While Redis is down, each process counts on its own rather than refusing everyone.
 */
export function createUserRateLimiter(options: { redis: RedisClient; prefix: string; perMinute: number }): UserRateLimiter {
  const limits = { points: options.perMinute, duration: 60 };
  return new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: `${options.prefix}:rate`,
    ...limits,
    insuranceLimiter: new RateLimiterMemory(limits),
  });
}

/**
 * Counts one request of the user (an HTTP request or a websocket handshake); over the rate, the
 * seconds until the user may go on.
 */
export async function consumeUserRate(limiter: UserRateLimiter, userId: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  try {
    await limiter.consume(userId);
    return { ok: true };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
  }
}

/** 429 `rate_limited` with `Retry-After` once a user is over the rate. */
export function limitUserRate(limiter: UserRateLimiter): RequestHandler {
  return async (_req, res, next) => {
    const rate = await consumeUserRate(limiter, userIdOf(res));
    if (!rate.ok) throw new AppError('rate_limited', 'too many requests; slow down', undefined, rate.retryAfterSeconds);
    next();
  };
}
