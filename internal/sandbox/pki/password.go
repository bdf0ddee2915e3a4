package pki

import (
	"crypto/rand"
	"fmt"
	"math/big"
)

// Character classes of generated passwords. The symbols avoid quotes,
// backslashes, '$' and '%' so that a password survives shell quoting, URLs,
// PowerShell strings and Terraform variables unchanged.
const (
	lowers  = "abcdefghijkmnopqrstuvwxyz"
	uppers  = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	digits  = "23456789"
	symbols = "-_.+!"
)

// RandomPassword returns a random password of length n (at least 8) with at
// least one character from each class, so it meets Windows' default
// complexity rules as well as vCenter's.
func RandomPassword(n int) (string, error) {
	if n < 8 {
		return "", fmt.Errorf("password length %d is below the minimum of 8", n)
	}
	classes := []string{lowers, uppers, digits, symbols}
	all := lowers + uppers + digits + symbols
	out := make([]byte, n)
	for i := range out {
		set := all
		if i < len(classes) {
			set = classes[i]
		}
		c, err := pick(set)
		if err != nil {
			return "", err
		}
		out[i] = c
	}
	// Shuffle so that the guaranteed classes are not always at the front.
	for i := len(out) - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", fmt.Errorf("generating password: %w", err)
		}
		out[i], out[j.Int64()] = out[j.Int64()], out[i]
	}
	return string(out), nil
}

func pick(set string) (byte, error) {
	i, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
	if err != nil {
		return 0, fmt.Errorf("generating password: %w", err)
	}
	return set[i.Int64()], nil
}
