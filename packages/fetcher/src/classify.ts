import { BlockedAddressError, type WebErrorCode } from './errors.js';

export interface ClassifiedError {
  readonly code: WebErrorCode;
  readonly retryable: boolean;
  readonly message: string;
}

const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_|UND_ERR_PRX_TLS)/;

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function messageOf(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  return String(err);
}

/**
 * Sorts a network-level failure into a stable code. Retryable as usp's helper would be and a bit
 * more: timeouts, resets and refused connections are often a server restarting; a name that does
 * not resolve, a bad certificate or a guard refusal will not change on a second try.
 */
export function classifyNetworkError(err: unknown): ClassifiedError {
  if (err instanceof BlockedAddressError) return { code: 'blocked', retryable: false, message: err.message };
  // The connector may surface the guard's error wrapped (through a proxy tunnel, say).
  const cause = (err as { cause?: unknown } | null)?.cause;
  if (cause instanceof BlockedAddressError)
    return { code: 'blocked', retryable: false, message: cause.message };
  const code = codeOf(err);
  const message = messageOf(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return { code: 'timeout', retryable: true, message };
    case 'ENOTFOUND':
      return { code: 'dns', retryable: false, message };
    case 'EAI_AGAIN':
      return { code: 'dns', retryable: true, message };
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_CLOSED':
    case 'ECONNRESET':
    case 'ECONNREFUSED':
    case 'ECONNABORTED':
    case 'EPIPE':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
      return { code: 'connection', retryable: true, message };
    case 'UND_ERR_HEADERS_OVERFLOW':
    case 'UND_ERR_RESPONSE':
    case 'UND_ERR_NOT_SUPPORTED':
      return { code: 'protocol', retryable: false, message };
    case 'UND_ERR_INVALID_ARG':
    case 'ERR_INVALID_URL':
      return { code: 'invalid-url', retryable: false, message };
    default:
      break;
  }
  if (TLS_CODE.test(code)) return { code: 'tls', retryable: false, message };
  if (code.startsWith('HPE_')) return { code: 'protocol', retryable: false, message };
  return { code: 'connection', retryable: false, message };
}
