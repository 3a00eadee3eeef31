// The lang parameter (NGSI-LD §4.15) over HTTP: ranked preferences with q weights, * for any
// language, and keyValues; malformed preferences are 400.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

let b: TestBroker;
beforeAll(async () => {
  b = await startTestBroker();
  const street = { type: 'LanguageProperty', languageMap: { fr: 'Grand Place', nl: 'Grote Markt' } };
  expect((await b.request('POST', '/ngsi-ld/v1/entities', { body: { id: 'urn:x:b', type: 'Building', street } })).status).toBe(201);
});
afterAll(() => b.close());

const street = async (query: string) => {
  const res = await b.request('GET', `/ngsi-ld/v1/entities/urn:x:b?${query}`);
  expect(res.status, query).toBe(200);
  return res.json.street;
};

describe('lang', () => {
  it('ranked preferences pick the best language', async () => {
    expect(await street(`lang=${encodeURIComponent('fr-CH,fr;q=0.9,en;q=0.8,*;q=0.5')}`)).toEqual({ type: 'Property', value: 'Grand Place', lang: 'fr' });
    expect(await street(`lang=${encodeURIComponent('de,nl;q=0.4')}`)).toEqual({ type: 'Property', value: 'Grote Markt', lang: 'nl' });
  });

  it('* shows one entry, in normalized and keyValues', async () => {
    expect(await street('lang=*')).toEqual({ type: 'Property', value: 'Grand Place', lang: 'fr' });
    expect(await street('lang=*&options=keyValues')).toBe('Grand Place');
  });

  it('400 for a malformed preference', async () => {
    for (const lang of ['fr;q=2', 'fr;x=1', 'f r', ',']) {
      const res = await b.request('GET', `/ngsi-ld/v1/entities/urn:x:b?lang=${encodeURIComponent(lang)}`);
      expect(res.status, lang).toBe(400);
    }
  });
});
