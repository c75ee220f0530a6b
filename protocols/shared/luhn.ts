/** The Luhn check digit of a decimal number (the 15th digit of an IMEI), as Traccar `Checksum.luhn`. */
export function luhnDigit(value: number): number {
  let sum = 0;
  let remain = value;
  for (let i = 0; remain > 0; i++) {
    let digit = remain % 10;
    if (i % 2 === 0) {
      digit *= 2;
      if (digit >= 10) digit = 1 + (digit % 10);
    }
    sum += digit;
    remain = Math.floor(remain / 10);
  }
  return (10 - (sum % 10)) % 10;
}
